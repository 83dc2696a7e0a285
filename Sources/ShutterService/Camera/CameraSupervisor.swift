// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterStorage

/// Owns the camera's life: open, start, hand every frame on, restart when
/// asked (the watchdog policy decides when; this type only carries it out),
/// and reopen it on request: another camera (`shutterctl camera`), or the same
/// one with another opening (sizes, sensor HDR: `shutterctl set`), falling back
/// to the previous target when the new one does not start. `run` is one
/// service of the service's task group; what happens goes to the loop's inbox
/// as events. A restart or a reopen stops the current stream, which ends the
/// wait for frames and starts the next one.
///
/// Which camera, opening and controls is not kept here: every command carries
/// its `CameraTarget` (`CameraInUse` owns it) and `.started` reports the
/// one that runs. The supervisor keeps the device it must stop, and the order
/// not yet carried out.
actor CameraSupervisor {
    enum Event: Sendable {
        /// Frames are coming (after the first start, a restart or a reopen) from
        /// `camera`, opened as `target` says.
        case started(any CameraDevice, CameraTarget, restart: Bool)
        /// The camera could not be opened or started.
        case unavailable(any Error, restart: Bool)
        /// The stream ended by itself (unplugged, failed): the camera is lost.
        case lost
        /// The reopen operation `op` asked for (`reopen`) ended as `outcome`.
        case reopened(op: Int, SwitchOutcome)
    }

    /// How a reopen ended.
    enum SwitchOutcome: Sendable {
        /// The new camera (or opening) streams.
        case switched(CameraInfo)
        /// The new camera failed (`error`); the previous target streams again.
        case wentBack(error: any Error, to: CameraInfo)
        /// The new camera failed, and so did starting the previous one again:
        /// the watchdog's restarts take over, as after any failed start.
        case failed(error: any Error, previous: any Error)
    }

    /// The next start: what to start, and for a reopen what to go back to.
    private struct Order {
        let target: CameraTarget
        /// A reopen (operation `op`): the device is let go and `target` opened anew, else `back`.
        var reopen: (back: CameraTarget, op: Int)?
    }

    private let open: @Sendable (Int?, CameraOpening) async throws -> any CameraDevice
    private let log = Log("shutter.camera")
    /// The device to stop (a resource: what it was opened with is the target's).
    private var camera: (any CameraDevice)?
    private enum Phase { case starting, streaming, waiting }
    private var phase = Phase.starting
    private var restarting = false
    private var next: Order?
    private let restartWanted = Wakeup()

    init(open: @escaping @Sendable (Int?, CameraOpening) async throws -> any CameraDevice) {
        self.open = open
    }

    /// Starts the camera `first` names and delivers its events until cancelled,
    /// then stops it. Its frames go from the camera's own queue to `frames(camera)`'s
    /// sink (the loop's inbox), not through this actor: a frame is one hop from the
    /// camera to the loop.
    func run(first: CameraTarget, events: @escaping @Sendable (Event) -> Void,
             frames: @escaping @Sendable (any CameraDevice) -> FrameSink) async {
        var isRestart = false
        // What the camera now running was started as: reported with `.started`.
        var running = first
        next = Order(target: first)
        while !Task.isCancelled {
            phase = .starting
            let order = next ?? Order(target: running)
            next = nil
            running = order.target
            var ended: Wakeup?
            var failedReopen: (op: Int, error: any Error)?
            if let reopen = order.reopen {
                // The stopped camera is let go first: the same camera reopens
                // (libcamera lets one user acquire it), and a sensor control set
                // before the open needs every camera closed.
                camera = nil
                do {
                    let (cam, end) = try await startNew(order.target, frames: frames)
                    camera = cam
                    ended = end
                    events(.reopened(op: reopen.op, .switched(cam.info)))
                } catch {
                    log.warning("camera \(order.target.index.map(String.init) ?? "(configured)") did not start with "
                                + "\(order.target.opening) (\(error)); going back to the previous camera and opening")
                    failedReopen = (reopen.op, error)
                    running = reopen.back
                }
            }
            do {
                if ended == nil {
                    let cam: any CameraDevice
                    if let c = camera { cam = c } else { cam = try await open(running.index, running.opening) }
                    camera = cam
                    await give(running.controls, to: cam)
                    ended = try await Self.start(cam, frames: frames)
                }
                guard let cam = camera, let ended else { break }
                if let (op, error) = failedReopen { events(.reopened(op: op, .wentBack(error: error, to: cam.info))) }
                if next?.reopen != nil {
                    // A reopen asked for while this camera was starting: taken up now.
                    await cam.stop()
                    isRestart = true
                    continue
                }
                phase = .streaming
                events(.started(cam, running, restart: isRestart))
                // Until the stream ends (a stop, a restart, an unplug) or the service stops.
                await ended.wait()  // returns at a cancellation too
                if Task.isCancelled { break }
                if restarting {
                    restarting = false
                    isRestart = true
                    continue
                }
                camera = nil
                events(.lost)
            } catch {
                if let (op, first) = failedReopen { events(.reopened(op: op, .failed(error: first, previous: error))) }
                events(.unavailable(error, restart: isRestart))
            }
            // Wait for the watchdog's next restart (its backoff decides when), or a reopen.
            phase = .waiting
            if next?.reopen == nil { await restartWanted.wait() }
            restarting = false
            isRestart = true
        }
        await camera?.stop()
        let stopping = CameraError(.system, "shutterd is stopping")
        if let op = next?.reopen?.op { events(.reopened(op: op, .failed(error: stopping, previous: stopping))) }
        next = nil
    }

    /// The controls in force before every start, so a remembered setting holds from the first frame.
    private func give(_ controls: CameraControls, to cam: any CameraDevice) async {
        if cam.controlReport.asked != controls { await cam.apply(controls) }
    }

    /// Opens and starts `target`'s camera; a camera that opened but did not
    /// start is stopped again (and let go).
    private func startNew(_ target: CameraTarget, frames: @Sendable (any CameraDevice) -> FrameSink) async throws
        -> (any CameraDevice, Wakeup)
    {
        let cam = try await open(target.index, target.opening)
        do {
            await give(target.controls, to: cam)
            return (cam, try await Self.start(cam, frames: frames))
        } catch {
            await cam.stop()
            throw error
        }
    }

    /// Starts `cam` into the sink `frames` gives; the wakeup returned is notified when its stream ends.
    private static func start(_ cam: any CameraDevice,
                              frames: @Sendable (any CameraDevice) -> FrameSink) async throws -> Wakeup {
        let ended = Wakeup()
        let sink = frames(cam)
        try await cam.start(into: FrameSink(deliver: sink.deliver, ended: { sink.ended(); ended.notify() }))
        return ended
    }

    /// Stops the current stream (if any) so `run` starts the camera again as
    /// `target` says (the device is kept: the same camera, the controls given again).
    func restart(_ target: CameraTarget) async {
        if next?.reopen == nil { next = Order(target: target) }  // a reopen asked for goes first
        await interrupt()
    }

    /// Ends the current stream, or the wait after a failed start, so `run` starts again.
    private func interrupt() async {
        switch phase {
        case .streaming:
            restarting = true
            if let cam = camera { await cam.stop() }
        case .waiting:
            restartWanted.notify()
        case .starting:
            break  // a start is already under way; a pending order is taken up when it ends
        }
    }

    /// Reopens for operation `op`: `target` (another camera, or the same with another
    /// opening). The current camera stops and is let go, the new one opens and starts; if
    /// it does not, `back` (the target that ran) opens again. Returns once the current
    /// stream is stopped; how it ended comes as `.reopened(op:)` from `run`, as every
    /// camera event does. The loop asks between captures only, one at a time.
    func reopen(_ target: CameraTarget, back: CameraTarget, op: Int) async {
        next = Order(target: target, reopen: (back, op))
        await interrupt()
    }
}
