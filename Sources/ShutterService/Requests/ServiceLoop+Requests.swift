// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterMedia
import ShutterStorage

/// The loop's requests (control socket, web page, terminal, MQTT): each routed to the
/// path that owns it, answered at once or when its outcome is known (RequestBook).
extension ServiceLoop {
    // MARK: - Requests

    /// The one dispatch: each command to the path that owns it.
    func request(_ command: ServiceCommand, _ reply: Reply) {
        if stopping != nil, command != .status { return reply.send(.failure("shutterd is stopping")) }
        switch command {
        case .status:
            reply.send(ControlReply(ok: true, status: status))
        case .press:
            reply.send(press(at: reply.arrivedAt ?? ctx.now))
        case .release:
            release(reply)
        case .photo:
            ask(.photo, bound: .seconds(45), reply)
        case .hold(let seconds):
            let held = Duration.milliseconds(Int64(seconds * 1000))
            ask(.recordStart(stopAfter: held), bound: held + .seconds(45), reply)
        case .recordStart:
            ask(.recordStart(stopAfter: nil), bound: .seconds(45), reply, answerAtStart: true)
        case .recordStop:
            ask(.recordStop, bound: .seconds(45), reply)
        case .sim(let sim):
            reply.send(simCommand(sim))
        case let .set(key, value):
            route(control.set(key, to: value, reply: reply))
        case .get(let key):
            reply.send(control.get(key))
        case .reset(let key):
            route(control.reset(key, reply: reply))
        case .focus(let focus):
            route(control.focus(focus, reply: reply))
        case .camera(let argument):
            control.cameraRequest(argument, reply: reply)
        case .files:
            files.list(reply)
        case .delete(let target):
            files.delete(target, inProgress: betweenCaptures ? nil : inProgressText, saved: photo.photos + clip.clips, reply)
        case .trouble(let part, let what):
            give(trouble: part, what)
            reply.send(ControlReply(ok: true))
        case .upload(let action):
            reply.send(upload(action))
        case .interval(let action):
            reply.send(interval(action))
        case .timelapse(let ask):
            timelapse(ask, reply)
        case let .uploadReport(report, events):
            uploaded(report, events)
            reply.send(ControlReply(ok: true))
        case .events, .webToken, .mqttForget:
            // The control socket answers these itself; from anywhere else they are not taken.
            reply.send(.failure("\(command.name) is answered on the control socket only"))
        }
    }

    func route(_ effects: [CameraControlPlane.Effect]) {
        for case .machine(let input) in effects { give(input) }
    }

    /// Gives the request an id and hands it to the state machine; its answer
    /// comes when the capture it became ends, or at once when refused.
    /// `bound`: the longest a client waits (its capture's own time plus the
    /// one capture it may queue behind; the machine's own timeouts come first).
    func ask(_ command: CaptureCommand, bound: Duration, _ reply: Reply, answerAtStart: Bool = false) {
        let now = ctx.now
        let id = requests.newRequest(at: now)
        requests.wait(.request(id), deadline: now + bound, reply)
        if answerAtStart { requests.answerWhenStarted(.request(id)) }
        give(.command(command, id))
    }

    /// Signals and terminal keys: the same requests, nobody waiting for the answer.
    @discardableResult
    func submit(_ command: CaptureCommand) -> RequestID {
        let now = ctx.now
        let id = requests.newRequest(at: now)
        give(.command(command, id))
        return id
    }

    /// `press` / `release`: a button press of the client's own, fed to the same
    /// recognizer as the physical button's edges, dated exactly, so the release
    /// can be answered with what this press became (or that it made nothing).
    func press(at t: MonotonicTime) -> ControlReply {
        guard button.clientPress == nil else { return .failure("the button is already pressed by a client; release it first") }
        button.clientPress = t
        feed(button.edge(ButtonEdge(pressed: true, time: t)))
        return ControlReply(ok: true)
    }

    func release(_ reply: Reply) {
        guard let p = button.clientPress else {
            return reply.send(.failure("the button is not pressed by a client (send press first)"))
        }
        button.clientPress = nil
        let now = ctx.now
        let released = max(p, reply.arrivedAt ?? now)
        feed(button.advance(to: released))  // the press counts once steady for button.stabilityMs
        guard button.heldPress == p else {
            feed(button.edge(ButtonEdge(pressed: false, time: released)))
            var r = ControlReply(ok: true, files: [])
            r.note = "released within button.stabilityMs (\(ctx.config.button.stabilityMs) ms): not a press"
            return reply.send(r)
        }
        requests.wait(.button(press: p), deadline: now + .seconds(45), reply)
        feed(button.edge(ButtonEdge(pressed: false, time: released)))
    }

    func simCommand(_ r: ServiceCommand.SimRequest) -> ControlReply {
        switch ctx.roles.simCommand(r, current: control.inUse.camera, log: ctx.log) {
        case nil: return .failure("sim commands need the simulated board (--board sim)")
        case let problem? where !problem.isEmpty: return .failure(problem)
        default: return ControlReply(ok: true, status: status)
        }
    }
}

extension ServiceLoop {
    /// `shutterctl upload status|pause|resume|retry`: the status from the uploader's last
    /// report; the others passed on to it as the live event it follows.
    func upload(_ action: ServiceCommand.UploadAction) -> ControlReply {
        guard ctx.config.upload.enabled else {
            return .failure("uploads are off (upload.enabled is false); docs/uploads.md says how to turn them on")
        }
        var r = ControlReply(ok: true)
        switch action {
        case .status:
            r.upload = journal.upload
            if journal.upload == nil {
                r.note = "the uploader has not reported yet: it runs in shutterd-connector.service when shutterd "
                    + "runs under systemd (`systemctl status shutterd-connector`)"
            }
        case .pause, .resume, .retry:
            live.relay([LiveEvent(type: UploadPart.commandEvent, data: ["action": .string(action.rawValue)])])
            r.note = "passed to the uploader; `shutterctl upload status` shows the queue"
        }
        return r
    }
}
