// SPDX-License-Identifier: BSD-2-Clause
/// A wall-clock instant with the local UTC offset in force at that instant, and
/// whether the clock was believed at all. Wall time only names files and dates
/// EXIF; everything that measures time uses `MonotonicTime`.
public struct WallTime: Sendable, Equatable {
    public var secondsSinceEpoch: Int64
    /// 0 ..< 1_000_000_000.
    public var nanoseconds: Int32
    /// Local time minus UTC, in seconds (e.g. +3600 for CET).
    public var utcOffsetSeconds: Int32
    /// False when nothing vouches for the clock (no RTC, no time sync yet):
    /// then dates must be omitted rather than written as 1970 or a stale boot time.
    public var isTrusted: Bool

    public init(secondsSinceEpoch: Int64, nanoseconds: Int32 = 0, utcOffsetSeconds: Int32 = 0,
                isTrusted: Bool) {
        self.secondsSinceEpoch = secondsSinceEpoch
        self.nanoseconds = nanoseconds
        self.utcOffsetSeconds = utcOffsetSeconds
        self.isTrusted = isTrusted
    }

    /// This instant moved by a (possibly negative) duration; offset and trust kept.
    public func adding(_ d: Duration) -> WallTime {
        let total = Int64(nanoseconds) + d.nanoseconds
        var s = secondsSinceEpoch + total / 1_000_000_000
        var ns = total % 1_000_000_000
        if ns < 0 { ns += 1_000_000_000; s -= 1 }
        return WallTime(secondsSinceEpoch: s, nanoseconds: Int32(ns), utcOffsetSeconds: utcOffsetSeconds,
                        isTrusted: isTrusted)
    }
}

/// Source of wall time. Injected so tests can pose as a synchronised or an
/// unsynchronised clock; the system's is `SystemWallClock` (ShutterStorage).
public protocol WallClock: Sendable {
    func now() -> WallTime
}

extension WallClock {
    public var isTrusted: Bool { now().isTrusted }

    /// The wall time of a point on the monotonic timeline (e.g. a frame's sensor
    /// timestamp), by reading both clocks now and stepping back.
    public func wallTime(at t: MonotonicTime, monotonic: some MonotonicClock) -> WallTime {
        let wall = now()
        return wall.adding(t - monotonic.now())
    }
}

/// A wall clock that says what the test tells it.
public struct FixedWallClock: WallClock {
    public var time: WallTime
    public init(_ time: WallTime) { self.time = time }
    public func now() -> WallTime { time }
}
