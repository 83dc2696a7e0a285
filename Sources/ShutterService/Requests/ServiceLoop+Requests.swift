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

    func request(_ r: ControlRequest, _ reply: Reply) {
        if stopping != nil, r.cmd != "status" { return reply.send(.failure("shutterd is stopping")) }
        switch r.cmd {
        case "status":
            reply.send(ControlReply(ok: true, status: status))
        case "press":
            reply.send(press(at: reply.arrivedAt ?? ctx.now))
        case "release":
            release(reply)
        case "tap", "photo":
            ask(.photo, bound: .seconds(45), reply)
        case "hold":
            // Its bounds were checked as the request was read (RequestNumber.holdSeconds).
            guard let seconds = r.seconds else {
                return reply.send(.failure("hold needs \"seconds\" between 0 and 3600, e.g. {\"cmd\":\"hold\",\"seconds\":3}"))
            }
            let held = Duration.milliseconds(Int64(seconds * 1000))
            ask(.recordStart(stopAfter: held), bound: held + .seconds(45), reply)
        case "record":
            switch r.action {
            case "start": ask(.recordStart(stopAfter: nil), bound: .seconds(45), reply, answerAtStart: true)
            case "stop": ask(.recordStop, bound: .seconds(45), reply)
            default: reply.send(.failure("record needs \"action\": \"start\" or \"stop\""))
            }
        case "sim":
            reply.send(simCommand(r))
        case "set":
            route(control.set(r, reply: reply))
        case "get":
            reply.send(control.get(r))
        case "reset":
            route(control.reset(r, reply: reply))
        case "focus":
            route(control.focus(r, reply: reply))
        case "camera":
            control.cameraRequest(r, reply: reply)
        case "files":
            files.list(reply)
        case "delete":
            files.delete(r, inProgress: betweenCaptures ? nil : inProgressText, saved: photo.photos + clip.clips, reply)
        default:
            reply.send(.failure("unknown command \"\(r.cmd)\""))
        }
    }

    func route(_ effects: [CameraControlPlane.Effect]) {
        for case .machine(let input) in effects { apply(machine.handle(input, at: ctx.now, lights: control.lights)) }
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
        apply(machine.handle(.command(command, id), at: now, lights: control.lights))
    }

    /// Signals and terminal keys: the same requests, nobody waiting for the answer.
    @discardableResult
    func submit(_ command: CaptureCommand) -> RequestID {
        let now = ctx.now
        let id = requests.newRequest(at: now)
        apply(machine.handle(.command(command, id), at: now, lights: control.lights))
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

    func simCommand(_ r: ControlRequest) -> ControlReply {
        switch ctx.roles.simCommand(r, current: control.camera, log: ctx.log) {
        case nil: return .failure("sim commands need the simulated board (--board sim)")
        case let problem? where !problem.isEmpty: return .failure(problem)
        default: return ControlReply(ok: true, status: status)
        }
    }
}
