import ShutterCore
import ShutterStorage

/// Owns the camera's life: open, start, hand every frame on, and restart when
/// asked (the watchdog policy decides when; this type only carries it out).
/// `run` is one loop in the service's task group; a restart stops the current
/// stream, which ends the loop's wait for frames and starts the next one.
actor CameraSupervisor {
    enum Event: Sendable {
        case frame(Frame)
        /// Frames are coming (after the first start or a restart).
        case started(CameraInfo, restart: Bool)
        /// The camera could not be opened or started.
        case unavailable(any Error, restart: Bool)
        /// The stream ended by itself (unplugged, failed): the camera is lost.
        case lost
    }

    private let open: @Sendable () async throws -> any CameraDevice
    private let log = Log("shutter.camera")
    private(set) var camera: (any CameraDevice)?
    private enum Phase { case starting, streaming, waiting }
    private var phase = Phase.starting
    private var restarting = false
    private let restartWanted = Wakeup()

    init(open: @escaping @Sendable () async throws -> any CameraDevice) {
        self.open = open
    }

    /// Starts the camera and delivers its events until cancelled, then stops it.
    func run(_ emit: @escaping @Sendable (Event) async -> Void) async {
        var isRestart = false
        while !Task.isCancelled {
            phase = .starting
            do {
                let cam: any CameraDevice
                if let c = camera { cam = c } else { cam = try await open() }
                camera = cam
                let frames = try await cam.start()
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
                await emit(.unavailable(error, restart: isRestart))
            }
            // Wait for the watchdog's next restart (its backoff decides when).
            phase = .waiting
            await restartWanted.wait()
            restarting = false
            isRestart = true
        }
        await camera?.stop()
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
}
