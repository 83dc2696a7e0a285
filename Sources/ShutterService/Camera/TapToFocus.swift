// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// `shutterctl focus X Y | reset`: the point becomes a small window that is the
/// runtime value of `camera.focus.window` and `camera.exposure.window`, then an
/// AF cycle of its own where the lens is in auto mode.
extension CameraControlPlane {
    static let pointOfInterestKeys = ["camera.focus.window", "camera.exposure.window"]

    func focus(_ request: ServiceCommand.FocusRequest, reply: Reply) -> [Effect] {
        let before = settings
        var notes: [String] = []
        guard case .point(let point) = request else {
            for key in Self.pointOfInterestKeys { _ = try? settings.reset(key, source: "shutterctl focus reset") }
            ctx.log.notice("point of interest reset: the configuration's focus and exposure windows")
            notes.append("focus and exposure metering back to the configuration's windows")
            let id = ops.begin(.focus(autofocus: false), reply: reply, before: before)
            ops[id]?.notes = notes
            return takeEffect(id)
        }
        let c = ctx.config.camera
        let window = point.window(controls: settings.effective.camera.controls, rotation: c.rotation,
                                  hflip: c.hflip, vflip: c.vflip)
        let value = JSONValue.array(window.map(JSONValue.double))
        do throws(ConfigError) {
            for key in Self.pointOfInterestKeys { try settings.set(key, to: value, source: "shutterctl focus") }
        } catch {
            settings = before  // both or neither
            reply.send(.failure(error.description))
            return []
        }
        ctx.log.notice("point of interest \(point.x), \(point.y): focus and exposure windows \(value.rendered(pretty: false))")
        notes.append("focus and exposure metering on \(value.rendered(pretty: false))")
        let id = ops.begin(.focus(autofocus: true), reply: reply, before: before)
        ops[id]?.notes = notes
        return takeEffect(id)
    }

    /// What the lens does about the new window: an AF cycle of its own in auto mode.
    func focusCycle(_ id: Int) {
        guard let op = ops[id] else { return }
        guard let cam = camera else {
            op.notes.append("no camera is open: the windows apply when it starts")
            return finish(id, focusReply(op.notes))
        }
        switch settings.effective.camera.controls.focus.effectiveMode {
        case .manual:
            let at = lastMetadata?.lensPosition.map { " (at \(Self.dioptres($0)) dioptres)" } ?? ""
            op.notes.append("manual focus: the lens is left alone\(at)")
        case .continuous:
            op.notes.append("continuous autofocus follows the window")
        case .auto:
            if op.deferred {
                op.notes.append("autofocus mode: the window is used from the next press's autofocus cycle")
                break
            }
            // A cycle of its own, as the demos' tap does; bounded, it never hangs the reply.
            op.step = .focusing
            jobs.add { .focused(op: id, await cam.autofocus(timeout: .seconds(2))) }
            return
        }
        finish(id, focusReply(op.notes))
    }

    func focused(op id: Int, _ r: AutofocusResult) {
        guard let op = ops[id] else { return }
        let lens = r.lensPosition.map { ", lens at \(Self.dioptres($0)) dioptres" } ?? ""
        if r.timedOut {
            op.notes.append("autofocus cycle timed out after 2 s\(lens)")
        } else {
            op.notes.append("autofocus cycle \(r.state == .focused ? "focused" : "did not focus (\(r.state))")\(lens)")
        }
        finish(id, focusReply(op.notes))
    }

    func focusReply(_ notes: [String]) -> ControlReply {
        var notes = notes
        // Said, never dropped: a window the camera cannot place (libcamera has no
        // exposure metering window; a fixed-focus lens no AfWindows).
        for l in camera?.controlReport.lacking ?? [] where l.keys.contains(where: Self.pointOfInterestKeys.contains) {
            notes.append("not applied: \(l)")
        }
        var reply = ControlReply(ok: true)
        reply.settings = Self.pointOfInterestKeys.map(settingState)
        reply.note = notes.joined(separator: "; ")
        return reply
    }

    static func dioptres(_ d: Double) -> String { String(Double((d * 100).rounded()) / 100) }
}
