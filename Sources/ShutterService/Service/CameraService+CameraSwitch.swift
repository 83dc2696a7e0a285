import ShutterCore
import ShutterStorage

/// `shutterctl camera [NEXT|INDEX|MODEL]`: the demos' front/back switch. The
/// switch waits for the capture in progress (as a setting does), stops the
/// camera, starts the new one, and if that fails starts the previous one again:
/// the service never ends up without a camera because of a switch. The choice
/// is kept in the state file (`RuntimeSettings.camera`) and taken up at start.
/// A setting that restarts the camera (CameraService+CameraRestart.swift) goes
/// through the same `reopenCamera`.
extension CameraService {
    func cameraCommand(_ request: ControlRequest) async -> ControlReply {
        let cameras: [CameraListing]
        do {
            cameras = try await roles.listCameras()
        } catch {
            return .failure("cannot list the cameras: \(error)")
        }
        let inUse = inUseIndex(in: cameras)
        guard let argument = request.camera else {
            var reply = ControlReply(ok: true)
            reply.cameras = cameras.map { c in
                var c = c
                c.inUse = c.index == inUse
                return c
            }
            return reply
        }
        guard let choice = CameraChoice(parsing: argument) else {
            return .failure("camera needs next, an index (0, 1, ...) or a model name, not \"\(argument)\"; "
                            + "`shutterctl camera` lists them")
        }
        let index: Int
        switch choice.pick(from: cameras, inUse: inUse) {
        case .success(let i): index = i
        case .failure(let e): return .failure("\(e.message); `shutterctl camera` lists them")
        }
        let target = cameras[index]
        if index == inUse, cameraHealthy {
            var reply = ControlReply(ok: true)
            reply.camera = target
            reply.note = "camera \(target.summary) is already in use"
            return reply
        }
        if stopping { return .failure("shutterd is stopping") }
        if cameraSwitching {
            var reply = ControlReply.failure("busy: a camera switch is in progress")
            reply.busy = true
            return reply
        }
        cameraSwitching = true
        defer { cameraSwitching = false }
        await waitBetweenCaptures(for: "camera switch to \(target.summary)")
        let from = inUse.map { cameras[$0].summary } ?? "none"
        log.notice("camera switch: \(from) to \(target.summary)")
        let outcome = await reopenCamera(index: index, opening: cameraOpening, status: "switching camera")
        var reply: ControlReply
        switch outcome {
        case .switched:
            settings.camera = CameraPick(index: index, model: target.model)
            let saved = await saveSettings()
            log.notice("camera \(target.summary) in use (was \(from))")
            reply = ControlReply(ok: true)
            reply.note = "switched from camera \(from) to camera \(target.summary)" + (saved.map { "; \($0)" } ?? "")
        case .wentBack(let error, _):
            let message = "camera \(target.summary) did not start: \(Self.reason(error)); went back to camera \(from), "
                + "which is running again"
            log.warning(message)
            lastError = message
            reply = .failure(message)
        case .failed(let error, let previousError):
            let message = "camera \(target.summary) did not start: \(Self.reason(error)); going back to camera \(from) "
                + "failed too: \(Self.reason(previousError)); it is retried like any camera that stops"
            log.error(message)
            lastError = message
            reply = .failure(message)
        }
        reply.camera = (try? await roles.listCameras()).flatMap { list in inUseIndex(in: list).map { list[$0] } }
        return reply
    }

    /// Waits until no capture is in progress (the caller has set
    /// `cameraSwitching`, so nothing else reopens the camera meanwhile).
    func waitBetweenCaptures(for what: String) async {
        if !betweenCaptures { log.notice("\(what): waiting for the capture in progress") }
        // Again after each wait: a press may come in before this task runs on.
        while !betweenCaptures { await withCheckedContinuation { switchWaiters.append($0) } }
    }

    /// The one way the camera is reopened on request (a switch, a setting that
    /// restarts it): the camera at `index` (nil: the one in use) with
    /// `opening`, or, when it does not start, the previous camera and opening
    /// again (`CameraSupervisor.switchCamera`). Captures wait meanwhile; it
    /// returns once frames come (at most a frame timeout after the start).
    func reopenCamera(index: Int?, opening: CameraOpening, status: String) async -> CameraSupervisor.SwitchOutcome {
        // Captures wait while no camera streams; the first frame restores them.
        cameraHealthy = false
        ring.removeAll()
        lastMetadata = nil
        // Let go here too: the supervisor closes the camera before opening the next.
        camera = nil
        apply(machine.handle(.fault(.cameraLost), at: clock.now()))
        publishStatus(status)
        // Not a stalled camera, however long the start takes (up to the restart timeout).
        watchdog.cameraReopenBegan(at: clock.now())
        reopenPending = true
        let outcome = await supervisor.switchCamera(to: index, opening: opening)
        reopenPending = false
        watchdog.cameraReopenEnded(at: clock.now())
        camera = await supervisor.camera
        cameraOpening = await supervisor.opening
        if case .failed = outcome { return outcome }
        await waitForFrames()
        return outcome
    }

    /// Until the camera's first frame (captures work again), at most a frame
    /// timeout (then the watchdog takes over, as after any start).
    private func waitForFrames() async {
        let deadline = clock.now() + .milliseconds(Int64(config.watchdog.frameTimeoutMs))
        while !cameraHealthy, !stopping, clock.now() < deadline {
            try? await clock.sleep(for: .milliseconds(10))
        }
    }

    /// A camera error's message without its code prefix (it reads in a sentence).
    static func reason(_ error: any Error) -> String {
        (error as? CameraError)?.message ?? "\(error)"
    }

    /// The camera in use among `cameras` (by libcamera's id); nil when none runs.
    func inUseIndex(in cameras: [CameraListing]) -> Int? {
        guard let id = camera?.info.id else { return nil }
        return cameras.firstIndex { $0.id == id }
    }

    /// At start, before the camera opens: the camera a switch chose, if it is
    /// still connected; else the configured choice, with a warning (the choice
    /// stays remembered for when it is back).
    func chooseRememberedCamera() async {
        guard let pick = settings.camera else { return }
        let cameras = (try? await roles.listCameras()) ?? []
        if let i = pick.find(in: cameras) {
            await supervisor.choose(i)
            log.notice("camera \(cameras[i].summary), as `shutterctl camera` chose (remembered in "
                       + "\(SettingsFile.path(root: storage.root)))")
        } else {
            let there = cameras.isEmpty ? "no camera is listed" : "the cameras are " + cameras.map(\.summary).joined(separator: ", ")
            log.warning("the camera `shutterctl camera` chose, \(pick.index) (\(pick.model)), is not connected "
                        + "(\(there)); using the configured camera (camera.index / camera.model)")
        }
    }

    /// A switch waiting for the capture in progress goes on once it is over
    /// (called with the waiting settings, after every machine step).
    func resumeCameraSwitchIfIdle() {
        guard !switchWaiters.isEmpty, betweenCaptures else { return }
        let waiters = switchWaiters
        switchWaiters = []
        for w in waiters { w.resume() }
    }
}
