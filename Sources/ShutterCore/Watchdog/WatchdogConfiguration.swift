// SPDX-License-Identifier: BSD-2-Clause
/// Deadlines and escalation limits of the watchdog policy.
public struct WatchdogConfiguration: Equatable, Sendable {
    /// No frame for this long: the camera is stalled.
    public var frameTimeout: Duration
    /// Time allowed for the first frame after start (and after a camera restart).
    public var firstFrameTimeout: Duration
    /// While recording, no encoder progress for this long: the encoder is stalled.
    public var encoderTimeout: Duration
    /// No storage report (a probe or a capture write, ok or failed) for this long:
    /// storage I/O is hung.
    public var storageTimeout: Duration
    /// A camera restart not answered within this counts as failed.
    public var restartTimeout: Duration
    /// Backoff before restart attempt n: initialBackoff × 2^(n-1), at most maxBackoff.
    public var initialBackoff: Duration
    public var maxBackoff: Duration
    /// Give up (exit, systemd restarts the service) after this many failed restarts in a row.
    public var maxConsecutiveRestartFailures: Int
    /// Give up when an encoder or storage stall has lasted this long: the
    /// process cannot fix a hung thread or a hung fsync itself.
    public var stallGiveUp: Duration
    /// DESIGN.md says WATCHDOG=1 only while storage is writable. A full or
    /// failing card is reported with an LED code and the service stays up;
    /// withholding the ping would make systemd restart it in a loop that fixes
    /// nothing. So by default a *reported* storage failure keeps pinging and
    /// only a *hung* storage stops it; set true for the stricter reading.
    public var withholdPingOnStorageFailure: Bool

    public init(frameTimeout: Duration = .seconds(2), firstFrameTimeout: Duration = .seconds(10),
                encoderTimeout: Duration = .seconds(5), storageTimeout: Duration = .seconds(30),
                restartTimeout: Duration = .seconds(15), initialBackoff: Duration = .seconds(1),
                maxBackoff: Duration = .seconds(30), maxConsecutiveRestartFailures: Int = 5,
                stallGiveUp: Duration = .seconds(60), withholdPingOnStorageFailure: Bool = false) {
        self.frameTimeout = frameTimeout
        self.firstFrameTimeout = firstFrameTimeout
        self.encoderTimeout = encoderTimeout
        self.storageTimeout = storageTimeout
        self.restartTimeout = restartTimeout
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.maxConsecutiveRestartFailures = maxConsecutiveRestartFailures
        self.stallGiveUp = stallGiveUp
        self.withholdPingOnStorageFailure = withholdPingOnStorageFailure
    }

    /// The wait before restart attempt `attempt` (1-based).
    public func backoff(attempt: Int) -> Duration {
        let cap = maxBackoff.nanoseconds
        var ns = initialBackoff.nanoseconds
        for _ in 1..<max(1, attempt) {
            ns = ns > cap / 2 ? cap : ns * 2
            if ns >= cap { break }
        }
        return .nanoseconds(min(ns, cap))
    }
}
