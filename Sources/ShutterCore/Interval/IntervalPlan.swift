// SPDX-License-Identifier: BSD-2-Clause
/// Interval capture's timetable (`interval.*`), pure: which instants are slots. A slot is a
/// whole multiple of `everySeconds` on a timeline of seconds, so a restart finds the same
/// grid (every 60 s lands on :00). On the wall clock the timeline is local time (seconds
/// since the epoch plus the UTC offset), so every 3600 s lands on the hour and daily
/// windows are read in local time; on the monotonic clock it is seconds since boot, and
/// windows cannot be read (the service waits for a trusted clock then). A change of the
/// UTC offset (daylight saving) moves the grid with it; nothing here corrects for it.
public struct IntervalPlan: Sendable, Equatable {
    /// One daily window, in seconds of the day: `start` inclusive, `end` exclusive; an
    /// `end` at or before `start` crosses midnight ("22:00-06:00").
    public struct Window: Sendable, Equatable, CustomStringConvertible {
        public var start: Int
        public var end: Int

        public init(start: Int, end: Int) {
            self.start = start
            self.end = end
        }

        /// The end as seconds after the start's midnight (past 86400 when it crosses midnight).
        var endAfterStartDay: Int { end > start ? end : end + Self.day }

        static let day = 86_400

        public var description: String { Self.clock(start) + "-" + Self.clock(end) }

        static func clock(_ s: Int) -> String {
            let h = s / 3600, m = s % 3600 / 60
            return (h < 10 ? "0" : "") + String(h) + ":" + (m < 10 ? "0" : "") + String(m)
        }
    }

    /// A windows text that does not read; `message` says what to write.
    public struct WindowsError: Error, Equatable, Sendable {
        public var message: String
    }

    public let everySeconds: Int64
    /// Empty: all day.
    public let windows: [Window]
    /// Photos in all; 0 = no limit.
    public let count: Int

    /// How far `nextSlot` and `latestSlot` look for a window (a week and a day).
    public static let searchSeconds: Int64 = 8 * 86_400

    public init(everySeconds: Int, windows: [Window] = [], count: Int = 0) {
        self.everySeconds = Int64(max(1, everySeconds))
        self.windows = windows
        self.count = max(0, count)
    }

    /// From the configuration (validated already: a windows text that does not read is all day).
    public init(config: ShutterConfig.Interval) {
        self.init(everySeconds: config.everySeconds, windows: (try? Self.windows(config.windows)) ?? [],
                  count: config.count)
    }

    /// The count is reached: no more slots.
    public func isFinished(taken: Int) -> Bool { count > 0 && taken >= count }

    /// Whether instant `t` (seconds on the plan's timeline) lies in a window.
    public func isInWindow(_ t: Int64) -> Bool {
        if windows.isEmpty { return true }
        let day = Self.floorDiv(t, Int64(Window.day)) * Int64(Window.day)
        // An occurrence that began yesterday may still be open (it crosses midnight).
        for d in [day - Int64(Window.day), day] {
            for w in windows where d + Int64(w.start) <= t && t < d + Int64(w.endAfterStartDay) { return true }
        }
        return false
    }

    /// The first slot after `t` (strictly), or nil when no window holds one within
    /// `searchSeconds` (a window shorter than the interval between two of its slots).
    public func nextSlot(after t: Int64) -> Int64? {
        var c = Self.floorDiv(t, everySeconds) * everySeconds + everySeconds
        let limit = t + Self.searchSeconds
        while c <= limit {
            if isInWindow(c) { return c }
            // Outside every window: on to the first slot at or after the next opening.
            c = Self.ceilDiv(nextOpening(after: c), everySeconds) * everySeconds
        }
        return nil
    }

    /// The last slot at or before `t`, or nil when none lies within `searchSeconds` before it.
    public func latestSlot(atOrBefore t: Int64) -> Int64? {
        var c = Self.floorDiv(t, everySeconds) * everySeconds
        let limit = t - Self.searchSeconds
        while c >= limit {
            if isInWindow(c) { return c }
            // Outside every window: back to the last slot before the previous closing.
            c = Self.floorDiv(previousClosing(atOrBefore: c) - 1, everySeconds) * everySeconds
        }
        return nil
    }

    /// The earliest window opening after `t` (windows not empty).
    private func nextOpening(after t: Int64) -> Int64 {
        let day = Self.floorDiv(t, Int64(Window.day)) * Int64(Window.day)
        var best = Int64.max
        for d in [day, day + Int64(Window.day)] {
            for w in windows where d + Int64(w.start) > t { best = min(best, d + Int64(w.start)) }
        }
        return best
    }

    /// The latest window closing at or before `t` (windows not empty).
    private func previousClosing(atOrBefore t: Int64) -> Int64 {
        let day = Self.floorDiv(t, Int64(Window.day)) * Int64(Window.day)
        var best = Int64.min
        for d in [day - 2 * Int64(Window.day), day - Int64(Window.day), day] {
            for w in windows where d + Int64(w.endAfterStartDay) <= t { best = max(best, d + Int64(w.endAfterStartDay)) }
        }
        return best
    }

    // MARK: The windows' text

    /// What `interval.windows` takes, in words (for the error messages and the docs).
    public static let windowsHelp = "daily windows \"HH:MM-HH:MM\" in local time, several separated by commas "
        + "(\"06:00-09:00,17:00-20:00\"); a window may cross midnight (\"22:00-06:00\"); \"\" = all day"

    /// "06:00-09:00,22:00-06:00" as windows; "" is none (all day).
    public static func windows(_ text: String) throws(WindowsError) -> [Window] {
        var out: [Window] = []
        let all = text.trimmedSpaces
        if all.isEmpty { return [] }
        for part in all.split(separator: ",", omittingEmptySubsequences: false) {
            let item = part.trimmedSpaces
            let ends = item.split(separator: "-", omittingEmptySubsequences: false)
            guard ends.count == 2, let start = clockTime(ends[0], allowMidnightEnd: false),
                  let end = clockTime(ends[1], allowMidnightEnd: true) else {
                throw WindowsError(message: "\"\(item)\" is not a window \"HH:MM-HH:MM\"")
            }
            guard start != end % Window.day else {
                throw WindowsError(message: "\"\(item)\" starts where it ends (for all day, leave interval.windows empty)")
            }
            out.append(Window(start: start, end: end))
        }
        return out
    }

    /// "HH:MM" (00:00 to 23:59; "24:00" only as an end) as seconds of the day.
    private static func clockTime(_ text: Substring, allowMidnightEnd: Bool) -> Int? {
        let hm = text.trimmedSpaces.split(separator: ":", omittingEmptySubsequences: false)
        guard hm.count == 2, hm[0].count == 2, hm[1].count == 2, hm.allSatisfy({ $0.allSatisfy(\.isASCII) }),
              let h = Int(hm[0]), let m = Int(hm[1]), (0...59).contains(m) else { return nil }
        if h == 24 && m == 0 && allowMidnightEnd { return Window.day }
        guard (0...23).contains(h) else { return nil }
        return h * 3600 + m * 60
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    static func ceilDiv(_ a: Int64, _ b: Int64) -> Int64 { -floorDiv(-a, b) }
}
