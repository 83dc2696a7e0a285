// SPDX-License-Identifier: BSD-2-Clause
/// Whether interval capture's timeline (local seconds: the wall clock plus its UTC offset)
/// moved against the monotonic clock since the last look: NTP or a person stepping the wall
/// clock, or the UTC offset changing (daylight saving). Between two looks both clocks
/// advance alike (a loop that stalls stalls both; NTP's slewing is a few hundred ppm), so a
/// difference beyond `tolerance` is a step of that size. Pure: the service reads the clocks.
public struct IntervalTimeline: Sendable, Equatable {
    /// The timeline's nanoseconds minus the monotonic clock's, at the last look.
    private var difference: Int64?

    /// Steps smaller than this are not steps (slewing, the reading's own jitter).
    public static let tolerance: Int64 = 1_000_000_000

    public init() {}

    /// Looks at both clocks now; the step in nanoseconds (positive: forward) when the
    /// timeline moved against the monotonic clock since the last look, else nil.
    public mutating func step(timelineNanoseconds t: Int64, monotonicNanoseconds m: Int64) -> Int64? {
        let d = t &- m
        defer { difference = d }
        guard let before = difference else { return nil }
        let step = d &- before
        return abs(step) > Self.tolerance ? step : nil
    }

    /// Forgets the last look (the timeline is not read for a while: the monotonic clock's).
    public mutating func forget() { difference = nil }

    /// "3 h 0 min 25 s", "30 s": a step's size in words.
    public static func words(_ nanoseconds: Int64) -> String {
        let s = abs(nanoseconds) / 1_000_000_000
        let h = s / 3600, m = s % 3600 / 60, r = s % 60
        if h > 0 { return "\(h) h \(m) min \(r) s" }
        if m > 0 { return "\(m) min \(r) s" }
        return "\(r) s"
    }
}
