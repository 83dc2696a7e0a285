// SPDX-License-Identifier: BSD-2-Clause
/// A blink pattern as data on a timeline: steps of on/off with durations,
/// played once or looped. `level(at:)` is a pure function of the offset from
/// the pattern's origin, so patterns are tested at exact milliseconds and the
/// driver only sleeps until the next change.
public struct LEDPattern: Equatable, Sendable {
    public struct Step: Equatable, Sendable {
        public var on: Bool
        public var duration: Duration

        public init(on: Bool, duration: Duration) {
            self.on = on
            self.duration = duration
        }

        public static func on(_ ms: Int64) -> Step { Step(on: true, duration: .milliseconds(ms)) }
        public static func off(_ ms: Int64) -> Step { Step(on: false, duration: .milliseconds(ms)) }
    }

    public enum Repeat: Equatable, Sendable {
        /// Loops for as long as it is shown (a state: ready, recording, an error code).
        case forever
        /// Plays once and is then finished (an event: photo taken, busy refused);
        /// the driver then returns to the looping pattern underneath.
        case once
    }

    public var steps: [Step]
    public var repeats: Repeat

    /// Steps of zero or negative length are dropped: they could never be seen
    /// and would make the timeline ambiguous.
    public init(_ steps: [Step], repeats: Repeat) {
        self.steps = steps.filter { $0.duration > .zero }
        self.repeats = repeats
    }

    public static func steady(_ on: Bool) -> LEDPattern {
        LEDPattern([Step(on: on, duration: .seconds(1))], repeats: .forever)
    }

    public static let off = LEDPattern.steady(false)

    /// Length of one pass through the steps.
    public var cycleDuration: Duration {
        steps.reduce(Duration.zero) { $0 + $1.duration }
    }

    /// A `.once` pattern is finished from the end of its last step on.
    public func isFinished(at offset: Duration) -> Bool {
        repeats == .once && offset >= cycleDuration
    }

    /// The LED level `offset` after the origin. Before the origin the first
    /// step's level; after a `.once` pattern ends, off.
    public func level(at offset: Duration) -> Bool {
        guard let first = steps.first else { return false }
        if offset < .zero { return first.on }
        if isFinished(at: offset) { return false }
        var t = position(of: offset)
        for step in steps {
            if t < step.duration { return step.on }
            t -= step.duration
        }
        return steps[steps.count - 1].on
    }

    /// The first offset after `offset` at which the level changes (or a `.once`
    /// pattern finishes), or nil when it never changes again.
    public func nextChange(after offset: Duration) -> Duration? {
        let cycle = cycleDuration
        guard cycle > .zero, !isFinished(at: offset) else { return nil }
        let from = max(offset, .zero)
        let current = level(at: from)
        let cycleStart = from - position(of: from)
        // Walk at most two cycles: the current one and, when looping, the next.
        var boundary = cycleStart
        for pass in 0..<2 {
            for step in steps {
                let start = boundary
                boundary += step.duration
                if start > from && step.on != current { return start }
            }
            if repeats == .once {
                // The end of a one-shot pattern is a change (the driver leaves it).
                return boundary
            }
            if pass == 1 { break }
        }
        return nil
    }

    /// Offset inside the current cycle.
    private func position(of offset: Duration) -> Duration {
        let cycle = cycleDuration.nanoseconds
        guard cycle > 0 else { return .zero }
        let ns = offset.nanoseconds
        return .nanoseconds(repeats == .forever ? ns % cycle : min(ns, cycle))
    }
}

extension LEDPattern {
    /// A blink whose period shrinks linearly from `startPeriod` to `endPeriod`
    /// over `span` (50 % duty, starting on). Used for the recording blink that
    /// speeds up as the max duration nears, and for the shutdown countdown.
    public static func accelerating(over span: Duration, startPeriod: Duration, endPeriod: Duration,
                                    repeats: Repeat) -> LEDPattern {
        let total = span.nanoseconds
        let p0 = Double(startPeriod.nanoseconds), p1 = Double(endPeriod.nanoseconds)
        guard total > 0, p0 > 0, p1 > 0 else { return .off }
        var steps: [Step] = []
        var t: Int64 = 0
        while t < total {
            let f = Double(t) / Double(total)
            let period = Int64(p0 + (p1 - p0) * f)
            // Round the half period to whole milliseconds so levels land on exact ms.
            let half = max(Int64(1), (period / 2 + 500_000) / 1_000_000) * 1_000_000
            let onLen = min(half, total - t)
            steps.append(Step(on: true, duration: .nanoseconds(onLen)))
            t += onLen
            guard t < total else { break }
            let offLen = min(half, total - t)
            steps.append(Step(on: false, duration: .nanoseconds(offLen)))
            t += offLen
        }
        return LEDPattern(steps, repeats: repeats)
    }
}
