// SPDX-License-Identifier: BSD-2-Clause
/// Why the service is not healthy.
public enum WatchdogReason: String, Equatable, Sendable {
    case framesStalled
    case encoderStalled
    case storageStalled
    case storageFailing

    /// sysexits(3) code for giving up, so the journal says what kind of failure it was.
    public var exitCode: Int32 {
        switch self {
        case .framesStalled: return 69    // EX_UNAVAILABLE
        case .encoderStalled: return 70   // EX_SOFTWARE
        case .storageStalled, .storageFailing: return 74  // EX_IOERR
        }
    }

    public var message: String {
        switch self {
        case .framesStalled: return "no camera frames: check the camera cable; restarting the camera"
        case .encoderStalled: return "the video encoder stopped making progress"
        case .storageStalled: return "storage I/O is hung: check or replace the card"
        case .storageFailing: return "storage writes fail: check or replace the card"
        }
    }
}

/// What the service does after `WatchdogPolicy.evaluate(now:)`.
public enum WatchdogDecision: Equatable, Sendable {
    /// Send WATCHDOG=1.
    case healthy
    /// Restart the camera now (the backoff has been waited), then report
    /// `cameraRestartSucceeded` or `cameraRestartFailed`. Returned once per attempt.
    case restartCamera(attempt: Int, backoff: Duration)
    /// Unhealthy, nothing to do yet: backing off before a camera restart
    /// (`until` = when the restart is due), or waiting for a restart to finish
    /// or its first frame (`until` = that deadline). No WATCHDOG=1.
    case waiting(WatchdogReason, until: MonotonicTime)
    /// Unhealthy with nothing the policy can do but wait (encoder or storage
    /// stalled): no WATCHDOG=1, and give up if it lasts.
    case unhealthy(WatchdogReason)
    /// Exit with `reason.exitCode` so systemd restarts the service.
    case giveUp(WatchdogReason)

    /// Only a healthy service pings the systemd watchdog.
    public var sendsKeepAlive: Bool { self == .healthy }
}
