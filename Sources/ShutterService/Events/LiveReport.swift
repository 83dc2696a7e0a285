// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterStorage

/// What live watchers (`/api/events`, `shutterctl events`) are told, published where
/// it happens: the state after the capture machine's transitions (and a recording's
/// seconds as they pass, and the error a camera-unavailable state names), each file
/// saved or deleted, each setting changed (`AskedSettings.settings`), the camera
/// switched, each gesture. Nothing is kept to compare but what the state event said last.
final class LiveReport {
    struct Snapshot {
        var state: CaptureState
        /// While recording: since when, and when it stops on its own.
        var recording: (from: MonotonicTime, end: MonotonicTime)?
        var lastError: String?
    }

    /// What the state event says: published again only when this changes.
    struct Shown: Equatable {
        var state: CaptureState
        var elapsedSeconds: Int?
        var remainingSeconds: Int?
        /// The error a camera-unavailable state names.
        var error: String?
    }

    private let events: LiveEvents
    private var shown: Shown?
    private var cameraID: String?

    init(events: LiveEvents) { self.events = events }

    /// The state as it is now, after a transition, a tick while recording or a camera error.
    func state(_ now: Snapshot, at time: MonotonicTime) {
        let s = Self.shown(now, at: time)
        guard s != shown else { return }
        shown = s
        events.publish(LiveEvent(type: "state", data: Self.state(s)))
    }

    /// While recording: the next whole second, when the state event's seconds change.
    static func nextSecond(of recording: (from: MonotonicTime, end: MonotonicTime)?, after now: MonotonicTime) -> MonotonicTime? {
        guard let r = recording else { return nil }
        let second: Int64 = 1_000_000_000
        let elapsed = max(.zero, now - r.from).nanoseconds / second
        return r.from + .nanoseconds((elapsed + 1) * second)
    }

    /// Files saved (a photo, a clip's files); `source` names a way in other than the
    /// button and requests ("interval", "trigger"), `trigger` the trigger input that made it.
    func saved(_ paths: [String], source: String? = nil, trigger: String? = nil) {
        for path in paths {
            guard let kind = Self.kind(of: path) else { continue }
            var data: JSONObject = ["path": .string(path), "kind": .string(kind), "name": .string(Self.name(of: path))]
            if let source { data["source"] = .string(source) }
            if let trigger { data["trigger"] = .string(trigger) }
            events.publish(LiveEvent(type: "file", data: data))
        }
    }

    /// Runtime settings changed (a request, a double tap, a reread, a rollback).
    func settingsChanged(from before: RuntimeSettings, to after: RuntimeSettings) {
        for key in RuntimeSettings.settableKeys where before.value(of: key) != after.value(of: key) {
            events.publish(LiveEvent(type: "setting", data: ["name": .string(key), "value": after.value(of: key)]))
        }
    }

    /// A camera started: told when it is another than the one before.
    func cameraStarted(_ c: CameraInfo) {
        // The first camera is part of the state a watcher starts from, not a switch.
        if let before = cameraID, before != c.id {
            events.publish(LiveEvent(type: "camera", data: ["id": .string(c.id), "model": .string(c.model)]))
        }
        cameraID = c.id
    }

    /// Events a part running elsewhere reported (the uploader's "uploaded", "upload-failed"),
    /// or passes on to one (`upload-command`): told as they are.
    func relay(_ reported: [LiveEvent]) {
        for e in reported { events.publish(e) }
    }

    /// A trigger input became active or inactive (debounced): `{"name": "pir", "active": true}`.
    func trigger(name: String, active: Bool) {
        events.publish(LiveEvent(type: "trigger", data: ["name": .string(name), "active": .bool(active)]))
    }

    /// A file the service deleted (by number, on request).
    func deleted(path: String) {
        events.publish(LiveEvent(type: "deleted", data: ["path": .string(path), "name": .string(Self.name(of: path))]))
    }

    /// A gesture of the button (the physical one or a client's press): "tap",
    /// "double-tap", "hold-start", "hold-end", "shutdown-countdown", "shutdown". Told
    /// directly: a gesture leaves no state behind to compare.
    func gesture(_ g: GestureEvent) {
        let word: String
        switch g {
        case .tap: word = "tap"
        case .doubleTap: word = "double-tap"
        case .holdStarted: word = "hold-start"
        case .hold: word = "hold-end"
        case .shutdownCountdown: word = "shutdown-countdown"
        case .shutdown: word = "shutdown"
        case .pressed, .shutdownCancelled: return
        }
        events.publish(LiveEvent(type: "gesture", data: ["gesture": .string(word)]))
    }

    static func shown(_ now: Snapshot, at time: MonotonicTime) -> Shown {
        var s = Shown(state: now.state)
        switch now.state {
        case .recording:
            if let r = now.recording {
                // Whole seconds, both from the elapsed time, so the state changes (and
                // is sent) once a second.
                let second: Int64 = 1_000_000_000
                let elapsed = max(.zero, time - r.from).nanoseconds / second
                let total = ((r.end - r.from).nanoseconds + second - 1) / second
                s.elapsedSeconds = Int(elapsed)
                s.remainingSeconds = Int(max(0, total - elapsed))
            }
        case .cameraUnavailable:
            s.error = now.lastError
        default:
            break
        }
        return s
    }

    static func state(_ now: Snapshot, at time: MonotonicTime) -> JSONObject { state(shown(now, at: time)) }

    /// The state in the page's words (ready, recording, saving, starting, error,
    /// stopping) with the service's own (`detail`, as `status.state`).
    static func state(_ s: Shown) -> JSONObject {
        var o: JSONObject = ["detail": .string(ServiceLoop.describe(s.state))]
        switch s.state {
        case .booting:
            o["state"] = .string("starting")
        case .idle, .pressed:
            o["state"] = .string("ready")
        case .takingPhoto, .finalising:
            o["state"] = .string("saving")
        case .recording:
            o["state"] = .string("recording")
            if let e = s.elapsedSeconds, let left = s.remainingSeconds {
                o["elapsedSeconds"] = .int(e)
                o["remainingSeconds"] = .int(left)
            }
        case .cameraUnavailable:
            o["state"] = .string("error")
            o["ledCode"] = .int(LEDErrorCode.noCamera.rawValue)
            o["message"] = .string(s.error ?? LEDErrorCode.noCamera.meaning)
        case .storageUnavailable(let code):
            o["state"] = .string("error")
            o["ledCode"] = .int(code.rawValue)
            o["message"] = .string(code.meaning)
        case .shutdownCountdown, .shuttingDown, .poweredOff:
            o["state"] = .string("stopping")
        }
        return o
    }

    /// "photo" or "video"; nil for what is not a medium of its own (a clip's poster).
    static func kind(of path: String) -> String? {
        switch path.split(separator: ".").last?.uppercased() {
        case "JPG", "JPEG": return "photo"
        case "MP4", "MOV", "MKV": return "video"
        default: return nil
        }
    }

    static func name(of path: String) -> String { String(path.split(separator: "/").last ?? "") }
}
