// SPDX-License-Identifier: BSD-2-Clause
/// The watchdog policy as pure logic on explicit timestamps: progress
/// deadlines for camera frames, the encoder (while recording) and storage;
/// camera restarts with exponential backoff; give up to systemd after N
/// failed restarts in a row. A frame after a restart is the recovery that
/// resets the count ("restart succeeded" alone is not: a camera that opens
/// but never delivers would otherwise restart forever).
public struct WatchdogPolicy: Sendable {
    private enum Camera: Equatable {
        /// Frames expected by `deadline`.
        case running(deadline: MonotonicTime)
        /// Restart attempt `attempt` is due at `due`.
        case backingOff(attempt: Int, due: MonotonicTime, backoff: Duration)
        /// Restart attempt `attempt` in progress; failed if not answered by `deadline`.
        case restarting(attempt: Int, deadline: MonotonicTime)
        /// Restart reported done; the first frame must come by `deadline`.
        case verifying(attempt: Int, deadline: MonotonicTime)
        /// The service reopens the camera on purpose (a camera switch, a
        /// setting that restarts it): no frames are expected, but the reopen
        /// must end by `deadline` (a hung open is a failed restart).
        case reopening(deadline: MonotonicTime)
        case gaveUp
    }

    public let configuration: WatchdogConfiguration
    private var camera: Camera
    /// Failed restarts in a row (restart failed, timed out, or no frame after it).
    public private(set) var consecutiveFailures = 0
    private var encoderDeadline: MonotonicTime?
    private var storageDeadline: MonotonicTime
    private var storageFailing = false
    private var gaveUpReason: WatchdogReason?
    /// The camera's frame period: the frame and encoder deadlines wait at least two of them.
    public private(set) var pace = FramePace(fps: 30)

    public init(configuration: WatchdogConfiguration = WatchdogConfiguration(), startedAt: MonotonicTime,
                fps: Int = 30) {
        self.configuration = configuration
        pace = FramePace(fps: fps)
        camera = .running(deadline: startedAt + configuration.firstFrameTimeout)
        storageDeadline = startedAt + configuration.storageTimeout
    }

    // MARK: - Inputs

    /// `exposure`: the frame's exposure time, when the camera reports it (a long one
    /// lengthens the frame period, and the patience for the next frame with it).
    public mutating func frameArrived(at t: MonotonicTime, exposure: Duration? = nil) {
        guard camera != .gaveUp else { return }
        pace.frame(at: t, exposure: exposure)
        camera = .running(deadline: t + pace.patience(configuration.frameTimeout))
        consecutiveFailures = 0
    }

    /// A recording began: encoder progress is expected from now on.
    public mutating func encoderStarted(at t: MonotonicTime) {
        encoderDeadline = t + pace.patience(configuration.encoderTimeout)
    }

    /// A packet was written (or any sign the encoder is moving).
    /// Moves the deadline later only: a progress time older than the recording's start (the
    /// last clip's, read before the new clip reset it) must not put the deadline in the past.
    public mutating func encoderProgress(at t: MonotonicTime) {
        let d = t + pace.patience(configuration.encoderTimeout)
        encoderDeadline = encoderDeadline.map { max($0, d) } ?? d
    }

    /// The recording ended: no encoder deadline while idle.
    public mutating func encoderStopped() {
        encoderDeadline = nil
    }

    /// A storage probe or write completed.
    public mutating func storageOK(at t: MonotonicTime) {
        storageDeadline = t + configuration.storageTimeout
        storageFailing = false
    }

    /// A storage probe or write returned an error (it returned: not hung).
    public mutating func storageFailed(at t: MonotonicTime) {
        storageDeadline = t + configuration.storageTimeout
        storageFailing = true
    }

    public mutating func cameraRestartSucceeded(at t: MonotonicTime) {
        guard case .restarting(let attempt, _) = camera else { return }
        camera = .verifying(attempt: attempt, deadline: t + configuration.firstFrameTimeout)
    }

    /// A deliberate reopen began: a gap in the frames longer than the frame
    /// timeout is not a stalled camera (a slow sensor start, a manager restart).
    public mutating func cameraReopenBegan(at t: MonotonicTime) {
        guard camera != .gaveUp else { return }
        camera = .reopening(deadline: t + configuration.restartTimeout)
    }

    /// The reopen ended (the camera started, or went back, or failed both
    /// ways): the first frame is expected as after any start.
    public mutating func cameraReopenEnded(at t: MonotonicTime) {
        guard case .reopening = camera else { return }
        camera = .running(deadline: t + configuration.firstFrameTimeout)
    }

    public mutating func cameraRestartFailed(at t: MonotonicTime) {
        guard case .restarting(let attempt, _) = camera else { return }
        restartFailed(attempt: attempt, at: t)
    }

    // MARK: - Decision

    public mutating func evaluate(now: MonotonicTime) -> WatchdogDecision {
        if let reason = gaveUpReason { return .giveUp(reason) }

        switch camera {
        case .running(let deadline) where now > deadline:
            let attempt = consecutiveFailures + 1
            let wait = configuration.backoff(attempt: attempt)
            camera = .backingOff(attempt: attempt, due: now + wait, backoff: wait)
        case .restarting(let attempt, let deadline) where now > deadline:
            restartFailed(attempt: attempt, at: now)
        case .verifying(let attempt, let deadline) where now > deadline:
            restartFailed(attempt: attempt, at: now)
        case .reopening(let deadline) where now > deadline:
            restartFailed(attempt: consecutiveFailures + 1, at: now)
        default:
            break
        }

        switch camera {
        case .gaveUp:
            return giveUp(.framesStalled)
        case .backingOff(let attempt, let due, let backoff):
            if now >= due {
                camera = .restarting(attempt: attempt, deadline: now + configuration.restartTimeout)
                return .restartCamera(attempt: attempt, backoff: backoff)
            }
            return .waiting(.framesStalled, until: due)
        case .restarting(_, let deadline), .verifying(_, let deadline):
            return .waiting(.framesStalled, until: deadline)
        case .running, .reopening:
            break
        }

        if let d = encoderDeadline, now > d {
            if now - d >= configuration.stallGiveUp { return giveUp(.encoderStalled) }
            return .unhealthy(.encoderStalled)
        }
        if now > storageDeadline {
            if now - storageDeadline >= configuration.stallGiveUp { return giveUp(.storageStalled) }
            return .unhealthy(.storageStalled)
        }
        if storageFailing && configuration.withholdPingOnStorageFailure {
            return .unhealthy(.storageFailing)
        }
        return .healthy
    }

    /// The next time `evaluate` may return something new (a deadline passes or
    /// a restart falls due); the service also evaluates at its ping interval.
    public var nextDeadline: MonotonicTime? {
        var times: [MonotonicTime] = [storageDeadline]
        if let d = encoderDeadline { times.append(d) }
        switch camera {
        case .running(let d), .restarting(_, let d), .verifying(_, let d), .reopening(let d): times.append(d)
        case .backingOff(_, let due, _): times.append(due)
        case .gaveUp: return nil
        }
        return times.min()
    }

    private mutating func restartFailed(attempt: Int, at t: MonotonicTime) {
        consecutiveFailures += 1
        if consecutiveFailures >= configuration.maxConsecutiveRestartFailures {
            camera = .gaveUp
            return
        }
        let next = attempt + 1
        let wait = configuration.backoff(attempt: next)
        camera = .backingOff(attempt: next, due: t + wait, backoff: wait)
    }

    private mutating func giveUp(_ reason: WatchdogReason) -> WatchdogDecision {
        gaveUpReason = reason
        camera = .gaveUp
        return .giveUp(reason)
    }
}
