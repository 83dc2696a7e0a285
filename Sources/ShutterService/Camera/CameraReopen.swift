// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// The camera's life as the control plane sees it: a reopen (a switch, or a
/// restart for a setting that changes the opening) and its rollback, the
/// supervisor's starts and losses, frames, and the controls given between captures.
extension CameraControlPlane {
    // MARK: Reopening

    /// Opens `wanted`; the supervisor goes back to the target in use when it
    /// does not start (`CameraSupervisor.reopen`).
    func startReopen(op: Int, _ wanted: CameraTarget) {
        camera = nil
        lastMetadata = nil
        let supervisor = self.supervisor, back = target
        jobs.add { .reopened(op: op, await supervisor.reopen(wanted, back: back)) }
    }

    /// The reopen job came back (the supervisor's `.started` came before it).
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
    func reopened(_ op: ControlOp) {
        op.reopen = nil
        let id = ops.id(of: op)
        if op.isSwitch {
            if op.failed == nil, let switched = op.target {
                settings.camera = CameraPick(index: switched.index, model: switched.model)
                ctx.log.notice("camera \(switched.summary) in use (was \(op.from))")
                op.notes.append("switched from camera \(op.from) to camera \(switched.summary)")
            }
            save(op: id)
            return
        }
        if op.failed != nil {
            // Back to the previous settings: the camera runs with them again
            // (the supervisor started the target it went back to).
            if let before = op.before { settings = before }
            unapplied = true
            if let reply = op.reply { reply.send(.failure(op.failed!)) }
            _ = ops.remove(id)
            return
        }
        let wanted = opening
        let granted = camera?.controlReport.videoSize.map {
            "; video \(Self.granted($0, of: wanted.videoSizes, note: camera?.controlReport.videoSizeNote))" } ?? ""
        let hdr = wanted.sensorHDR ? (camera?.controlReport.sensorHDR == true ? "; sensor HDR on" : "") : ""
        ctx.log.notice("camera restarted\(granted)\(hdr)")
        op.notes.append("the camera restarted for this change\(granted)\(hdr)")
        unapplied = true  // the controls, if they changed meanwhile
        op.step = .waitingForControls
    }

    // MARK: The camera's life

    /// The supervisor started `camera` as `started` says: it is the target in
    /// use (after a failed reopen, the one it went back to). Settings changed
    /// since the command left are given between captures.
    func started(_ camera: any CameraDevice, _ started: CameraTarget, restart: Bool) {
        for op in ops.all { if case .reopening(cameraStarted: false) = op.step { op.step = .reopening(cameraStarted: true) } }
        self.camera = camera
        target = started
        unapplied = true
        report.started(camera: camera, opening: started.opening, restart: restart, log: ctx.log)
        listCameras(for: nil)
    }

    /// The camera stopped or could not start.
    func lost() {
        delivery.cameraLost()
        camera = nil
        lastMetadata = nil
    }

    func frameArrived(_ f: Frame) {
        lastMetadata = f.metadata
        delivery.frameArrived(at: f.timestamp)
    }

    func photoSaved() { report.still(camera: camera, opening: opening, log: ctx.log) }

    /// Gives the camera `target.controls`, one change at a time; a newer one follows when it is done.
    func giveControls() {
        guard !delivery.isGiving, let cam = camera, cam.controlReport.asked != target.controls else { return }
        let controls = target.controls
        delivery.give(controls)
        jobs.add {
            await cam.apply(controls)
            return .controlsApplied
        }
    }

    func controlsApplied(now: MonotonicTime) {
        delivery.given(now: now)
        // What the camera lacks may have changed with the controls: said once, as at a start.
        if let lacking = camera?.controlReport.lacking { report.lacking(lacking, log: ctx.log) }
        giveControls()
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

    static func granted(_ size: PixelSize, of asked: [PixelSize], note: String? = nil) -> String {
        CameraReportLog.granted(size, of: asked, note: note)
    }
}
