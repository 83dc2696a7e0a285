// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterStorage

/// Owns the camera's life: open, start, hand every frame on, restart when
/// asked (the watchdog policy decides when; this type only carries it out),
/// and reopen it on request: another camera (`shutterctl camera`), or the same
/// one with another opening (sizes, sensor HDR: `shutterctl set`), falling back
/// to the previous camera and opening when the new one does not start. `run`
/// is one service of the service's task group; what happens goes to the loop's
/// inbox as events. A restart or a reopen stops the current stream, which ends
/// the wait for frames and starts the next one.
actor CameraSupervisor {
    enum Event: Sendable {
        /// Frames are coming (after the first start, a restart or a reopen) from
        /// `camera`, opened with `opening`.
        case started(any CameraDevice, opening: CameraOpening, restart: Bool)
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
        let reply: Eventually<SwitchOutcome>
    }

    private let open: @Sendable (Int?, CameraOpening) async throws -> any CameraDevice
    private let log = Log("shutter.camera")
    private var camera: (any CameraDevice)?
    /// The camera to open: nil = the configuration's choice, else an index of the board's list.
    private var choice: Int?
    /// What the camera is opened with (sizes, sensor HDR), and the controls it gets before each start.
    private var opening: CameraOpening
    private var controls: CameraControls
    private enum Phase { case starting, streaming, waiting }
    private var phase = Phase.starting
    private var restarting = false
    private var pendingSwitch: SwitchRequest?
    private let restartWanted = Wakeup()

    init(opening: CameraOpening, controls: CameraControls,
         open: @escaping @Sendable (Int?, CameraOpening) async throws -> any CameraDevice) {
        self.opening = opening
        self.controls = controls
        self.open = open
    }

    /// Before `run`: the camera to open first (a remembered switch), what to open
    /// it with and its controls (remembered runtime settings).
    func prepare(choice: Int?, opening: CameraOpening, controls: CameraControls) {
        self.choice = choice
        self.opening = opening
        self.controls = controls
    }

    /// Starts the camera and delivers its events until cancelled, then stops it. Its frames
    /// go from the camera's own queue to `frames(camera)`'s sink (the loop's inbox), not
    /// through this actor: a frame is one hop from the camera to the loop.
    func run(events: @escaping @Sendable (Event) -> Void,
             frames: @escaping @Sendable (any CameraDevice) -> FrameSink) async {
        var isRestart = false
        while !Task.isCancelled {
            phase = .starting
            var ended: Eventually<Void>?
            var failedSwitch: (request: SwitchRequest, error: any Error)?
            if let request = pendingSwitch {
                pendingSwitch = nil
                // The stopped camera is let go first: the same camera reopens
                // (libcamera lets one user acquire it), and a sensor control set
                // before the open needs every camera closed.
                camera = nil
                let index = request.index ?? choice
                do {
                    let (cam, end) = try await startNew(index: index, opening: request.opening, frames: frames)
                    camera = cam
                    choice = index
                    opening = request.opening
                    ended = end
                    request.reply.set(.switched(cam.info))
                } catch {
                    log.warning("camera \(index.map(String.init) ?? "(configured)") did not start with \(request.opening) "
                                + "(\(error)); going back to the previous camera and opening")
                    failedSwitch = (request, error)
                }
            }
            do {
                if ended == nil {
                    let cam: any CameraDevice
                    if let c = camera { cam = c } else { cam = try await open(choice, opening) }
                    camera = cam
                    await giveControls(cam)
                    ended = try await Self.start(cam, frames: frames)
                }
                guard let cam = camera, let ended else { break }
                failedSwitch?.request.reply.set(.wentBack(error: failedSwitch!.error, to: cam.info))
                if pendingSwitch != nil {
                    // A switch asked for while this camera was starting: taken up now.
                    await cam.stop()
                    isRestart = true
                    continue
                }
                phase = .streaming
                events(.started(cam, opening: opening, restart: isRestart))
                // Until the stream ends (a stop, a restart, an unplug) or the service stops.
                await withTaskCancellationHandler { await ended.value } onCancel: { ended.set(()) }
                if Task.isCancelled { break }
                if restarting {
                    restarting = false
                    isRestart = true
                    continue
                }
                camera = nil
                events(.lost)
            } catch {
                failedSwitch?.request.reply.set(.failed(error: failedSwitch!.error, previous: error))
                events(.unavailable(error, restart: isRestart))
            }
            // Wait for the watchdog's next restart (its backoff decides when), or a switch.
            phase = .waiting
            if pendingSwitch == nil { await restartWanted.wait() }
            restarting = false
            isRestart = true
        }
        await camera?.stop()
        let stopping = CameraError(.system, "shutterd is stopping")
        pendingSwitch?.reply.set(.failed(error: stopping, previous: stopping))
        pendingSwitch = nil
    }

    /// The controls in force before every start, so a remembered setting holds from the first frame.
    private func giveControls(_ cam: any CameraDevice) async {
        if cam.controlReport.asked != controls { await cam.apply(controls) }
    }

    /// Opens and starts the camera at `index`; a camera that opened but did not
    /// start is stopped again (and let go).
    private func startNew(index: Int?, opening: CameraOpening,
                          frames: @Sendable (any CameraDevice) -> FrameSink) async throws -> (any CameraDevice, Eventually<Void>) {
        let cam = try await open(index, opening)
        do {
            await giveControls(cam)
            return (cam, try await Self.start(cam, frames: frames))
        } catch {
            await cam.stop()
            throw error
        }
    }

    /// Starts `cam` into the sink `frames` gives; the result is set when its stream ends.
    private static func start(_ cam: any CameraDevice,
                              frames: @Sendable (any CameraDevice) -> FrameSink) async throws -> Eventually<Void> {
        let ended = Eventually<Void>()
        let sink = frames(cam)
        try await cam.start(into: FrameSink(deliver: sink.deliver, ended: { sink.ended(); ended.set(()) },
                                            caughtUp: sink.caughtUp))
        return ended
    }

    /// Stops the current stream (if any) so `run` starts the camera again, with `controls`.
    func restart(controls: CameraControls) async {
        self.controls = controls
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
            break  // a start is already under way; a pending switch is taken up when it ends
        }
    }

    /// Reopens: the camera at `index` of the board's list (nil: the one in
    /// use) with `opening` and `controls`. The current camera stops and is let
    /// go, the new one opens and starts; if it does not, the previous camera
    /// opens again with the previous opening. Returns once it streams (or both
    /// failed). The loop asks between captures only, one at a time.
    func switchCamera(to index: Int?, opening: CameraOpening, controls: CameraControls) async -> SwitchOutcome {
        let reply = Eventually<SwitchOutcome>()
        pendingSwitch = SwitchRequest(index: index, opening: opening, reply: reply)
        self.controls = controls
        await interrupt()
        return await reply.value
    }
}
