// SPDX-License-Identifier: BSD-2-Clause
/// A point on CLOCK_MONOTONIC, in nanoseconds. GPIO edge timestamps, sensor
/// timestamps, audio timestamps and timers all live on this one timeline.
public struct MonotonicTime: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public static func milliseconds(_ ms: Int64) -> MonotonicTime {
        MonotonicTime(nanoseconds: ms * 1_000_000)
    }

    /// Whole milliseconds, rounded toward negative infinity.
    public var milliseconds: Int64 {
        nanoseconds >= 0 ? nanoseconds / 1_000_000 : (nanoseconds - 999_999) / 1_000_000
    }

    public var seconds: Double { Double(nanoseconds) / 1e9 }

    public static func < (a: MonotonicTime, b: MonotonicTime) -> Bool { a.nanoseconds < b.nanoseconds }

    public static func + (t: MonotonicTime, d: Duration) -> MonotonicTime {
        MonotonicTime(nanoseconds: t.nanoseconds + d.nanoseconds)
    }

    public static func - (t: MonotonicTime, d: Duration) -> MonotonicTime {
        MonotonicTime(nanoseconds: t.nanoseconds - d.nanoseconds)
    }

    public static func - (a: MonotonicTime, b: MonotonicTime) -> Duration {
        .nanoseconds(a.nanoseconds - b.nanoseconds)
    }

    public var description: String { "\(milliseconds)ms" }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating far outside any camera's use).
    public var nanoseconds: Int64 {
        let (s, atto) = components
        return s * 1_000_000_000 + atto / 1_000_000_000
    }

    public var milliseconds: Int64 { nanoseconds / 1_000_000 }
}
