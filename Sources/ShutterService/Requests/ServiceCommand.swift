// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterSim
import ShutterStorage

/// A request as the service acts on it: decoded once, where it arrives (the control
/// socket, the web page, MQTT, the terminal), from the protocol's line (`ControlRequest`,
/// what `shutterctl` sends). Everything a request can get wrong is refused here, with the
/// words the reply gives; past this point a command is whole and nobody reads a field by
/// name. The loop dispatches on it once (`ServiceLoop.request`); `events`, `web-token`
/// and `mqtt` are answered by the control socket itself.
enum ServiceCommand: Sendable, Equatable {
    case status
    /// `tap` and `photo`: one photo, as a tap of the button would take it.
    case photo
    case hold(seconds: Double)
    case recordStart
    case recordStop
    /// A client's own button (`press`, then `release`).
    case press
    case release
    case sim(SimRequest)
    case set(key: String, value: JSONValue)
    /// `get` / `reset`: one setting, or every one (nil).
    case get(key: String?)
    case reset(key: String?)
    case focus(FocusRequest)
    /// `camera`: list the cameras (nil), or switch to "next", an index or a model.
    case camera(String?)
    case files
    case delete(DeleteTarget)
    case events
    case webToken(WebTokenCommand)
    case mqttForget
    /// `trouble`: a part running elsewhere (the connector's MQTT) says what went wrong, in
    /// words that say what to do: it becomes `status.lastError`.
    case trouble(part: String, what: String)
    /// `upload status|pause|resume|retry` (`shutterctl upload`).
    case upload(UploadAction)
    /// `upload-report`: the uploader (in the connector) says how the queue stands and what happened.
    case uploadReport(UploadReport, events: [LiveEvent])
    /// `interval status|pause|resume|reset` (`shutterctl interval`).
    case interval(IntervalAction)
    /// `timelapse [--from A] [--to B] [--fps N] [--size WxH] [--output NAME]`, `timelapse status|cancel`.
    case timelapse(TimelapseAsk)

    enum TimelapseAsk: Sendable, Equatable {
        case make(TimelapseJob.Order)
        case status
        case cancel
    }

    enum IntervalAction: String, Sendable, Equatable, CaseIterable { case status, pause, resume, reset }

    enum UploadAction: String, Sendable, Equatable, CaseIterable { case status, pause, resume, retry }

    struct SimRequest: Sendable, Equatable {
        var fault: SimCamera.Fault?
        var lux: Double?
        var ledFailing: Bool?
        /// A trigger input's simulated line, moved to `active`.
        var trigger: (name: String, active: Bool)?

        static func == (a: SimRequest, b: SimRequest) -> Bool {
            a.fault == b.fault && a.lux == b.lux && a.ledFailing == b.ledFailing
                && a.trigger?.name == b.trigger?.name && a.trigger?.active == b.trigger?.active
        }
    }

    enum FocusRequest: Sendable, Equatable {
        case point(PointOfInterest)
        case reset
    }

    enum DeleteTarget: Sendable, Equatable {
        /// The photo just taken.
        case last
        case number(DCFNumber)
    }

    enum WebTokenCommand: Sendable, Equatable {
        case add(name: String, scope: String)
        case list
        case revoke(name: String)
    }

    /// The protocol's name ("tap" arrives as `photo`): for logs and MQTT's allowed list.
    var name: String {
        switch self {
        case .status: return "status"
        case .photo: return "photo"
        case .hold: return "hold"
        case .recordStart, .recordStop: return "record"
        case .press: return "press"
        case .release: return "release"
        case .sim: return "sim"
        case .set: return "set"
        case .get: return "get"
        case .reset: return "reset"
        case .focus: return "focus"
        case .camera: return "camera"
        case .files: return "files"
        case .delete: return "delete"
        case .events: return "events"
        case .webToken: return "web-token"
        case .mqttForget: return "mqtt"
        case .trouble: return "trouble"
        case .upload: return "upload"
        case .uploadReport: return "upload-report"
        case .interval: return "interval"
        case .timelapse: return "timelapse"
        }
    }

    /// A request refused before it reached anything: the reply says why.
    struct Refusal: Error, Equatable {
        let reply: ControlReply
        init(_ message: String) { reply = .failure(message) }
        init(reply: ControlReply) { self.reply = reply }
    }

    /// The command a protocol request asks for, or why it cannot be one.
    static func decode(_ r: ControlRequest) -> Result<ServiceCommand, Refusal> {
        func refuse(_ message: String) -> Result<ServiceCommand, Refusal> { .failure(Refusal(message)) }
        switch r.cmd {
        case "status": return .success(.status)
        case "tap", "photo": return .success(.photo)
        case "press": return .success(.press)
        case "release": return .success(.release)
        case "files": return .success(.files)
        case "events": return .success(.events)
        case "hold":
            // Its bounds were checked as the request was read (RequestNumber.holdSeconds).
            guard let seconds = r.seconds else {
                return refuse("hold needs \"seconds\" between 0 and 3600, e.g. {\"cmd\":\"hold\",\"seconds\":3}")
            }
            return .success(.hold(seconds: seconds))
        case "record":
            switch r.action {
            case "start": return .success(.recordStart)
            case "stop": return .success(.recordStop)
            default: return refuse("record needs \"action\": \"start\" or \"stop\"")
            }
        case "sim":
            var sim = SimRequest(lux: r.lux, ledFailing: r.ledFailing)
            if let f = r.fault {
                guard let fault = SimCamera.Fault(rawValue: f) else {
                    return refuse("unknown fault \"\(f)\" (one of: \(SimCamera.Fault.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                sim.fault = fault
            }
            if let name = r.trigger {
                guard let active = r.active else {
                    return refuse("sim --trigger needs \"active\": true or false, e.g. {\"cmd\":\"sim\",\"trigger\":\"pir\",\"active\":true}")
                }
                sim.trigger = (name, active)
            } else if r.active != nil {
                return refuse("sim \"active\" needs \"trigger\": the name of a trigger input (triggers.inputs)")
            }
            return .success(.sim(sim))
        case "set":
            guard let key = r.key, let value = r.value else {
                return refuse("set needs \"key\" and \"value\", e.g. {\"cmd\":\"set\",\"key\":\"camera.exposure.ev\",\"value\":2}")
            }
            return .success(.set(key: key, value: value))
        case "get": return .success(.get(key: r.key))
        case "reset": return .success(.reset(key: r.key))
        case "focus":
            if r.action == "reset" { return .success(.focus(.reset)) }
            if let action = r.action {
                return refuse("focus takes \"x\" and \"y\", or \"action\": \"reset\" (not \"\(action)\")")
            }
            do throws(PointOfInterest.Refusal) {
                return .success(.focus(.point(try PointOfInterest(x: r.x, y: r.y))))
            } catch {
                return refuse(error.message)
            }
        case "camera": return .success(.camera(r.camera))
        case "delete":
            switch r.file {
            case "last": return .success(.delete(.last))
            case let text?:
                guard let number = DCFNumber(webNumber: Substring(text)) else { return refuse(CardFiles.usage) }
                return .success(.delete(.number(number)))
            case nil: return refuse(CardFiles.usage)
            }
        case "web-token":
            switch r.action {
            case "add":
                guard let name = r.name, let scope = r.scope else {
                    return refuse("web-token add needs \"name\" and \"scope\" (view or control), "
                                  + "e.g. {\"cmd\":\"web-token\",\"action\":\"add\",\"name\":\"ha\",\"scope\":\"view\"}")
                }
                return .success(.webToken(.add(name: name, scope: scope)))
            case "list": return .success(.webToken(.list))
            case "revoke":
                guard let name = r.name else { return refuse("web-token revoke needs \"name\"") }
                return .success(.webToken(.revoke(name: name)))
            default: return refuse("web-token needs \"action\": add, list or revoke")
            }
        case "mqtt":
            guard r.action == "forget" else { return refuse("mqtt needs \"action\": \"forget\"") }
            return .success(.mqttForget)
        case "trouble":
            guard let part = r.name, !part.isEmpty, case .string(let what)? = r.value, !what.isEmpty else {
                return refuse("trouble needs \"name\" (the part) and \"value\" (what went wrong, as text)")
            }
            return .success(.trouble(part: String(part.prefix(64)), what: String(what.prefix(2048))))
        case "upload":
            guard let action = r.action.flatMap(UploadAction.init(rawValue:)) else {
                return refuse("upload needs \"action\": status, pause, resume or retry")
            }
            return .success(.upload(action))
        case "interval":
            guard let action = r.action.flatMap(IntervalAction.init(rawValue:)) else {
                return refuse("interval needs \"action\": status, pause, resume or reset")
            }
            return .success(.interval(action))
        case "timelapse":
            return timelapse(r).map { .timelapse($0) }
        case "upload-report":
            guard case .object(var o)? = r.value else { return refuse("upload-report needs \"value\": the report") }
            var events: [LiveEvent] = []
            if case .array(let items)? = o.removeValue(forKey: "events") {
                for case .object(var e) in items.prefix(1000) {
                    guard case .string(let type)? = e.removeValue(forKey: "event"), type == "uploaded" || type == "upload-failed"
                    else { continue }
                    events.append(LiveEvent(type: type, data: e))
                }
            }
            guard let report = try? PlainJSON.decode(UploadReport.self, from: JSONValue.object(o)) else {
                return refuse("upload-report: the report does not decode")
            }
            return .success(.uploadReport(report, events: events))
        default:
            return refuse("unknown command \"\(r.cmd)\" (known: \(ControlRequest.commands.joined(separator: ", ")))")
        }
    }
}
