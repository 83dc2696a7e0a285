import ShutterCore
import ShutterStorage

/// Owns the camera's life: open, start, hand every frame on, restart when
/// asked (the watchdog policy decides when; this type only carries it out),
/// and reopen it on request: another camera (`shutterctl camera`), or the same
/// one with another opening (sizes, sensor HDR: `shutterctl set`), falling back
/// to the previous camera and opening when the new one does not start. `run`
/// is one loop in the service's task group; a restart or a reopen stops the
/// current stream, which ends the loop's wait for frames and starts the next one.
actor CameraSupervisor {
    enum Event: Sendable {
        case frame(Frame)
        /// Frames are coming (after the first start, a restart or a switch).
        case started(CameraInfo, restart: Bool)
        /// The camera could not be opened or started.
        case unavailable(any Error, restart: Bool)
        /// The stream ended by itself (unplugged, failed): the camera is lost.
        case lost
    }

    /// How a reopen ended.
    enum SwitchOutcome: Sendable {
        /// The new camera (or opening) streams.
        case switched(CameraInfo)
        /// The new camera failed (`error`); the previous one, with the previous opening, streams again.
        case wentBack(error: any Error, to: CameraInfo)
        /// The new camera failed, and so did starting the previous one again:
        /// the watchdog's restarts take over, as after any failed start.
        case failed(error: any Error, previous: any Error)
    }

    private struct SwitchRequest {
        /// nil: the camera in use.
        let index: Int?
        let opening: CameraOpening
        let reply: CheckedContinuation<SwitchOutcome, Never>
    }

    private let open: @Sendable (Int?, CameraOpening) async throws -> any CameraDevice
    private let log = Log("shutter.camera")
    private(set) var camera: (any CameraDevice)?
    /// The camera to open: nil = the configuration's choice, else an index of the board's list.
    private(set) var choice: Int?
    /// What the camera is opened with (sizes, sensor HDR).
    private(set) var opening: CameraOpening
    private enum Phase { case starting, streaming, waiting }
    private var phase = Phase.starting
    private var restarting = false
    private var pendingSwitch: SwitchRequest?
    private let restartWanted = Wakeup()

    init(opening: CameraOpening, open: @escaping @Sendable (Int?, CameraOpening) async throws -> any CameraDevice) {
        self.opening = opening
        self.open = open
    }

    /// Before `run`: the camera to open first (a remembered switch).
    func choose(_ index: Int?) {
        choice = index
    }

    /// Before `run`: what to open it with (remembered runtime sizes, sensor HDR).
    func prepareOpening(_ opening: CameraOpening) {
        self.opening = opening
    }

    /// Starts the camera and delivers its events until cancelled, then stops it.
    /// `prepare` runs before every start (the runtime controls).
    func run(prepare: @escaping @Sendable (any CameraDevice) async -> Void = { _ in },
             _ emit: @escaping @Sendable (Event) async -> Void) async {
        var isRestart = false
        while !Task.isCancelled {
            phase = .starting
            var frames: AsyncStream<Frame>?
            var failedSwitch: (request: SwitchRequest, error: any Error)?
            if let request = pendingSwitch {
                pendingSwitch = nil
                // The stopped camera is let go first: the same camera reopens
                // (libcamera lets one user acquire it), and a sensor control set
                // before the open needs every camera closed.
                camera = nil
                let index = request.index ?? choice
                do {
                    let (cam, stream) = try await startNew(index: index, opening: request.opening, prepare: prepare)
                    camera = cam
                    choice = index
                    opening = request.opening
                    frames = stream
                    request.reply.resume(returning: .switched(cam.info))
                } catch {
                    log.warning("camera \(index.map(String.init) ?? "(configured)") did not start with \(request.opening) "
                                + "(\(error)); going back to the previous camera and opening")
                    failedSwitch = (request, error)
                }
            }
            do {
                if frames == nil {
                    let cam: any CameraDevice
                    if let c = camera { cam = c } else { cam = try await open(choice, opening) }
                    camera = cam
                    await prepare(cam)
                    frames = try await cam.start()
                }
                guard let cam = camera, let frames else { break }
                failedSwitch?.request.reply.resume(returning: .wentBack(error: failedSwitch!.error, to: cam.info))
                if pendingSwitch != nil {
                    // A switch asked for while this camera was starting: taken up now.
                    await cam.stop()
                    isRestart = true
                    continue
                }
                phase = .streaming
                await emit(.started(cam.info, restart: isRestart))
                for await f in frames { await emit(.frame(f)) }
                if Task.isCancelled { break }
                if restarting {
                    restarting = false
                    isRestart = true
                    continue
                }
                camera = nil
                await emit(.lost)
            } catch {
                failedSwitch?.request.reply.resume(returning: .failed(error: failedSwitch!.error, previous: error))
                await emit(.unavailable(error, restart: isRestart))
            }
            // Wait for the watchdog's next restart (its backoff decides when), or a switch.
            phase = .waiting
            if pendingSwitch == nil { await restartWanted.wait() }
            restarting = false
            isRestart = true
        }
        await camera?.stop()
        pendingSwitch?.reply.resume(returning: .failed(error: CameraError(.system, "shutterd is stopping"),
                                                       previous: CameraError(.system, "shutterd is stopping")))
        pendingSwitch = nil
    }

    /// Opens and starts the camera at `index`; a camera that opened but did not
    /// start is stopped again (and let go).
    private func startNew(index: Int?, opening: CameraOpening, prepare: @Sendable (any CameraDevice) async -> Void)
        async throws -> (any CameraDevice, AsyncStream<Frame>)
    {
        let cam = try await open(index, opening)
        do {
            await prepare(cam)
            return (cam, try await cam.start())
        } catch {
            await cam.stop()
            throw error
        }
    }

    /// Stops the current stream (if any) so `run` starts the camera again.
    func restart() async {
        switch phase {
        case .streaming:
            restarting = true
            if let cam = camera { await cam.stop() }
        case .waiting:
            restartWanted.notify()
        case .starting:
            break  // a start is already under way
        }
    }

    /// Reopens: the camera at `index` of the board's list (nil: the one in
    /// use) with `opening` (nil: the current one). The current camera stops
    /// and is let go, the new one opens and starts; if it does not, the
    /// previous camera opens again with the previous opening. Returns once it
    /// streams (or both failed). The service calls it between captures only,
    /// one at a time: a camera switch, or a setting that restarts the camera.
    func switchCamera(to index: Int?, opening: CameraOpening? = nil) async -> SwitchOutcome {
        await withCheckedContinuation { reply in
            pendingSwitch = SwitchRequest(index: index, opening: opening ?? self.opening, reply: reply)
            switch phase {
            case .streaming:
                restarting = true
                if let cam = camera { Task { await cam.stop() } }
            case .waiting:
                restartWanted.notify()
            case .starting:
                break  // taken up when this start ends
            }
        }
    }
}
