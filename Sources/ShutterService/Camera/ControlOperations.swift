// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// The operations under way: each request that changes something (`ControlOp`)
/// moves through its steps as the loop tells it what happened (`resume`, the job
/// results):
///
///     set/reset/focus: change → [reopen if the opening changed → first frame]
///                      → [camera has the controls] → state file → [AF cycle] → reply
///     camera switch:   list → wait for captures → reopen → first frame → state file → list → reply
///
/// Why between captures, when libcamera would take a control with the next
/// request: the exposure and white balance loops converge over several frames,
/// so a change landing during a still's warm-up gives a photo exposed between
/// two settings, and one landing mid-clip a visible jump. A change is for the
/// next capture: it waits while a photo, a press or a clip is in progress.
///
/// A reopen that fails starts the previous camera and opening again and puts
/// the settings back: the service never ends up without a camera because of a request.
/// The operations own only themselves: the settings are `AskedSettings`', the
/// camera `CameraInUse`'s.
final class ControlOperations {
    typealias Effect = CameraControlPlane.Effect

    let ctx: ServiceContext
    let asked: AskedSettings
    let inUse: CameraInUse
    let stateFile: SettingsStateFile
    private var ops = ControlOps()

    init(ctx: ServiceContext, asked: AskedSettings, inUse: CameraInUse, stateFile: SettingsStateFile) {
        self.ctx = ctx
        self.asked = asked
        self.inUse = inUse
        self.stateFile = stateFile
    }

    /// A reopen is under way: frames still coming from the camera being stopped are not this camera's.
    var reopening: Bool { ops.reopenPending }

    private var view: ControlView { ControlView(asked: asked, inUse: inUse) }

    // MARK: Beginning

    /// The settings changed (`before`: what a failed reopen puts back): an operation
    /// begins with `notes` and takes effect.
    func begin(_ kind: ControlOp.Kind, reply: Reply?, before: RuntimeSettings, notes: [String] = []) -> [Effect] {
        let id = ops.begin(kind, reply: reply, before: before)
        ops[id]?.notes = notes
        return takeEffect(id)
    }

    /// `shutterctl camera [next|INDEX|MODEL]`: lists the cameras (a job), then
    /// switches to the one asked for through a reopen.
    func switchCamera(_ argument: String?, reply: Reply) {
        let id = ops.begin(.camera(argument: argument), reply: reply)
        ops[id]?.step = .listing
        inUse.listCameras(for: id)
    }

    // MARK: Taking effect

    /// After a change: reopen when the opening changed (refused while another
    /// reopen is asked for), else mark the settings to apply.
    private func takeEffect(_ id: Int) -> [Effect] {
        guard let op = ops[id] else { return [] }
        let wanted = asked.opening, opening = inUse.opening
        if wanted != opening {
            if ops.reopenAsked {
                return refuseReopen(id, "busy: a camera switch or restart is in progress; try again", busy: true)
            }
            op.reopen = ControlOp.Reopen(index: nil, opening: wanted, what: Self.describeChange(from: opening, to: wanted))
            op.step = .waitingForCaptures
        } else {
            asked.unapplied = true
            op.step = .waitingForControls
        }
        return []
    }

    private func refuseReopen(_ id: Int, _ message: String, busy: Bool) -> [Effect] {
        guard let op = ops.remove(id) else { return [] }
        if let before = op.before {
            asked.settings = before
            asked.unapplied = true
        }
        if let reply = op.reply {
            var r = ControlReply.failure(message)
            if busy { r.busy = true }
            reply.send(r)
        } else {
            ctx.log.warning("configuration reread: \(message)")
        }
        return []
    }

    /// After every event: settings waiting for the captures to end are applied,
    /// and every operation goes as far as it can. `betweenCaptures`: no photo,
    /// press, clip or snapshot in progress.
    func resume(betweenCaptures: Bool, cameraHealthy: Bool, now: MonotonicTime) -> [Effect] {
        var effects: [Effect] = []
        // Twice: an operation that went on may have left settings to apply (after a reopen).
        for _ in 0..<2 {
            effects += resumeOnce(betweenCaptures: betweenCaptures, cameraHealthy: cameraHealthy, now: now)
            if !asked.unapplied || !betweenCaptures { break }
        }
        return effects
    }

    private func resumeOnce(betweenCaptures: Bool, cameraHealthy: Bool, now: MonotonicTime) -> [Effect] {
        var effects: [Effect] = []
        inUse.expire(now: now)
        if let mode = asked.flashToShow(betweenCaptures: betweenCaptures) {
            effects.append(.machine(.flashModeSet(mode)))
        }
        if asked.unapplied, betweenCaptures, !reopening {
            asked.unapplied = false
            inUse.give(asked.settings.effective.camera.controls)
        }
        for id in ops.ids {
            effects += advance(id, betweenCaptures: betweenCaptures, cameraHealthy: cameraHealthy, now: now)
        }
        return effects
    }

    /// The earliest time an operation waits for (the first frame's bound).
    var nextDeadline: MonotonicTime? {
        let waits = ops.all.compactMap { op -> MonotonicTime? in
            if case .waitingForFrames(let t) = op.step { return t }
            return nil
        }
        return (waits + [inUse.controlsDeadline].compactMap { $0 }).min()
    }

    private func advance(_ id: Int, betweenCaptures: Bool, cameraHealthy: Bool, now: MonotonicTime) -> [Effect] {
        guard let op = ops[id] else { return [] }
        switch op.step {
        case .start, .listing, .reopening, .saving, .focusing, .listingForReply:
            return []  // waits for a job
        case .waitingForCaptures:
            guard let reopen = op.reopen else { return [] }
            // The first reopen asked for goes first.
            if let first = ops.firstReopen, first != id { return [] }
            guard betweenCaptures, !reopening else {
                if !betweenCaptures, !op.saidWaiting {
                    op.saidWaiting = true
                    let what = op.target == nil ? "camera restart for \(reopen.what)" : reopen.what
                    ctx.log.notice("\(what): waiting for the capture in progress")
                }
                return []
            }
            op.step = .reopening(cameraStarted: false)
            let message: String
            // A switch keeps the controls; a restart for a setting opens with the new ones.
            let target = inUse.target
            var wanted = CameraTarget(index: reopen.index ?? target.index, opening: reopen.opening,
                                      controls: target.controls)
            if op.isSwitch {
                ctx.log.notice("camera switch: \(op.from) to \(op.target?.summary ?? "?")")
                message = "switching camera"
            } else {
                ctx.log.notice("camera restart for \(reopen.what)")
                wanted.controls = asked.settings.effective.camera.controls
                message = "restarting the camera"
            }
            inUse.reopen(wanted, op: id)
            return [.reopening(status: message)]
        case .waitingForFrames(let until):
            guard cameraHealthy || now >= until else { return [] }
            reopened(op)
            return advance(id, betweenCaptures: betweenCaptures, cameraHealthy: cameraHealthy, now: now)
        case .waitingForControls:
            let unapplied = asked.unapplied
            guard !unapplied || !betweenCaptures else { return [] }
            if unapplied {
                op.deferred = true
                op.notes.append("applied when the capture in progress ends")
            }
            guard unapplied || inUse.controlsQuiet else { return [] }
            save(op: id)
            return []
        }
    }

    private func finish(_ id: Int, _ reply: ControlReply) {
        ops.remove(id)?.reply?.send(reply)
    }

    /// Stopping: nobody waits for an operation that will not end.
    func failAll(_ message: String) {
        for id in ops.ids { finish(id, .failure(message)) }
    }

    // MARK: The camera's answers

    /// The supervisor started a camera: frames from now on are the new camera's.
    func cameraStarted() {
        for op in ops.all { if case .reopening(cameraStarted: false) = op.step { op.step = .reopening(cameraStarted: true) } }
    }

    /// The supervisor reported how the reopen ended (its `.started` may come before or after).
    func reopened(op id: Int, _ outcome: CameraSupervisor.SwitchOutcome, now: MonotonicTime) {
        guard let op = ops[id] else { return }
        let what = op.reopen?.what ?? "the change"
        switch outcome {
        case .switched:
            op.step = .waitingForFrames(until: now + .milliseconds(Int64(ctx.config.watchdog.frameTimeoutMs)))
            return
        case .wentBack(let error, _):
            if op.isSwitch {
                op.failed = "camera \(op.target?.summary ?? "?") did not start: \(Self.reason(error)); went back to camera "
                    + "\(op.from), which is running again"
            } else {
                op.failed = "the camera did not start with \(what): \(Self.reason(error)); it runs again with the "
                    + "previous settings, which are kept"
            }
            ctx.log.warning(op.failed!)
            op.step = .waitingForFrames(until: now + .milliseconds(Int64(ctx.config.watchdog.frameTimeoutMs)))
        case .failed(let error, let previousError):
            if op.isSwitch {
                op.failed = "camera \(op.target?.summary ?? "?") did not start: \(Self.reason(error)); going back to camera "
                    + "\(op.from) failed too: \(Self.reason(previousError)); it is retried like any camera that stops"
            } else {
                op.failed = "the camera did not start with \(what): \(Self.reason(error)); starting it again with the "
                    + "previous settings failed too: \(Self.reason(previousError)); it is retried like any camera that "
                    + "stops, with the previous settings"
            }
            ctx.log.error(op.failed!)
            reopened(op)
        }
    }

    /// Frames came after a reopen (or its bound passed): the operation goes on.
    private func reopened(_ op: ControlOp) {
        op.reopen = nil
        let id = ops.id(of: op)
        if op.isSwitch {
            if op.failed == nil, let switched = op.target {
                asked.settings.camera = CameraPick(index: switched.index, model: switched.model)
                ctx.log.notice("camera \(switched.summary) in use (was \(op.from))")
                op.notes.append("switched from camera \(op.from) to camera \(switched.summary)")
            }
            save(op: id)
            return
        }
        if op.failed != nil {
            // Back to the previous settings: the camera runs with them again
            // (the supervisor started the target it went back to).
            if let before = op.before { asked.settings = before }
            asked.unapplied = true
            if let reply = op.reply { reply.send(.failure(op.failed!)) }
            _ = ops.remove(id)
            return
        }
        let wanted = inUse.opening, report = inUse.camera?.controlReport
        let granted = report?.videoSize.map {
            "; video \(CameraReportLog.granted($0, of: wanted.videoSizes, note: report?.videoSizeNote))" } ?? ""
        let hdr = wanted.sensorHDR ? (report?.sensorHDR == true ? "; sensor HDR on" : "") : ""
        ctx.log.notice("camera restarted\(granted)\(hdr)")
        op.notes.append("the camera restarted for this change\(granted)\(hdr)")
        asked.unapplied = true  // the controls, if they changed meanwhile
        op.step = .waitingForControls
    }

    /// The cameras were listed (`CameraInUse` has them): the request that asked goes on.
    func listed(op id: Int?, _ result: Result<[CameraListing], any Error>, cameraHealthy: Bool) {
        guard let id, let op = ops[id] else { return }
        if case .listingForReply = op.step {
            var reply = op.failed.map(ControlReply.failure) ?? ControlReply(ok: true)
            if op.failed == nil { reply.note = op.notes.joined(separator: "; ") }
            reply.camera = inUse.inUseIndex.map { inUse.cameras[$0] }
            return finish(id, reply)
        }
        guard case .camera(let argument) = op.kind else { return }
        if case .failure(let e) = result { return finish(id, .failure("cannot list the cameras: \(e)")) }
        let index: Int
        switch inUse.choose(argument, cameraHealthy: cameraHealthy) {
        case .answer(let reply): return finish(id, reply)
        case .switchTo(let i): index = i
        }
        if ops.reopenAsked {
            var reply = ControlReply.failure("busy: a camera switch is in progress")
            reply.busy = true
            return finish(id, reply)
        }
        let cameras = inUse.cameras, target = cameras[index]
        op.target = target
        op.from = inUse.inUseIndex.map { cameras[$0].summary } ?? "none"
        op.reopen = ControlOp.Reopen(index: index, opening: inUse.opening, what: "camera switch to \(target.summary)")
        op.step = .waitingForCaptures
    }

    // MARK: The state file and the reply

    /// Writes the state file; the result goes to operation `id` (`saved`).
    func save(op id: Int?) {
        if let id { ops[id]?.step = .saving }
        stateFile.save(asked.settings, op: id)
    }

    /// The state file was written (or not): the operation's reply, or its AF cycle.
    func saved(op id: Int?, problem: String?) {
        if let problem { ctx.log.warning("runtime settings not remembered (they hold until a restart): \(problem)") }
        guard let id, let op = ops[id] else { return }
        if let problem { op.notes.append("not remembered across a restart: \(problem)") }
        let note = op.notes.isEmpty ? nil : op.notes.joined(separator: "; ")
        switch op.kind {
        case .set(let key):
            finish(id, ControlReply(setting: view.settingState(key), note: note))
        case .reset(let key?, _):
            finish(id, ControlReply(setting: view.settingState(key), note: note))
        case .reset(nil, let reset):
            var reply = ControlReply(ok: true)
            reply.settings = reset.map(view.settingState)
            reply.note = note ?? (reset.isEmpty ? "no runtime changes" : nil)
            finish(id, reply)
        case .focus(let autofocus):
            guard autofocus else { return finish(id, view.focusReply(op.notes)) }
            focusCycle(id)
        case .camera:
            op.step = .listingForReply
            inUse.listCameras(for: id)
        case .reload:
            _ = ops.remove(id)
        }
    }

    /// Tap-to-focus, once the windows are in force: what the lens does about them,
    /// an AF cycle of its own in auto mode.
    private func focusCycle(_ id: Int) {
        guard let op = ops[id] else { return }
        guard inUse.camera != nil else {
            op.notes.append("no camera is open: the windows apply when it starts")
            return finish(id, view.focusReply(op.notes))
        }
        switch asked.settings.effective.camera.controls.focus.effectiveMode {
        case .manual:
            let at = inUse.lastMetadata?.lensPosition.map { " (at \(Self.dioptres($0)) dioptres)" } ?? ""
            op.notes.append("manual focus: the lens is left alone\(at)")
        case .continuous:
            op.notes.append("continuous autofocus follows the window")
        case .auto:
            if op.deferred {
                op.notes.append("autofocus mode: the window is used from the next press's autofocus cycle")
                break
            }
            op.step = .focusing
            inUse.autofocus(op: id)
            return
        }
        finish(id, view.focusReply(op.notes))
    }

    func focused(op id: Int, _ r: AutofocusResult) {
        guard let op = ops[id] else { return }
        let lens = r.lensPosition.map { ", lens at \(Self.dioptres($0)) dioptres" } ?? ""
        if r.timedOut {
            op.notes.append("autofocus cycle timed out after 2 s\(lens)")
        } else {
            op.notes.append("autofocus cycle \(r.state == .focused ? "focused" : "did not focus (\(r.state))")\(lens)")
        }
        finish(id, view.focusReply(op.notes))
    }

    // MARK: Words

    /// A camera error's message without its code prefix (it reads in a sentence).
    static func reason(_ error: any Error) -> String {
        (error as? CameraError)?.message ?? "\(error)"
    }

    /// "video.sizes 1280x720 (was 1920x1080)", "camera.hdr sensor (was off)".
    static func describeChange(from old: CameraOpening, to new: CameraOpening) -> String {
        func list(_ s: [PixelSize]) -> String { s.map(\.description).joined(separator: ", ") }
        var parts: [String] = []
        if old.videoSizes != new.videoSizes { parts.append("video.sizes \(list(new.videoSizes)) (was \(list(old.videoSizes)))") }
        if old.stillSizes != new.stillSizes { parts.append("still.sizes \(list(new.stillSizes)) (was \(list(old.stillSizes)))") }
        if old.sensorHDR != new.sensorHDR {
            parts.append(new.sensorHDR ? "camera.hdr sensor" : "camera.hdr away from sensor")
        }
        return parts.joined(separator: " and ")
    }

    static func dioptres(_ d: Double) -> String { String(Double((d * 100).rounded()) / 100) }
}
