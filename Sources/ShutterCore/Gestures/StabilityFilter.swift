// SPDX-License-Identifier: BSD-2-Clause
/// Debounces a raw button level by the "stable for stabilityMs" rule:
/// a burst of edges starts at the first edge that leaves the stable level and
/// ends when the raw level has not changed for `stability`. If the level then
/// differs from the stable level the change is accepted, dated at the burst's
/// first edge (the real moment of the press); otherwise the burst was a glitch.
public struct StabilityFilter: Sendable {
    public struct Burst: Sendable, Equatable {
        public var start: MonotonicTime
        public var lastChange: MonotonicTime
    }

    public struct Change: Sendable, Equatable {
        public var pressed: Bool
        public var at: MonotonicTime
    }

    public let stability: Duration
    public private(set) var stableLevel: Bool
    public private(set) var rawLevel: Bool
    /// The burst being watched, if any. Its `start` bounds the date of any change
    /// not yet accepted, which the gesture layer needs before deciding on a deadline.
    public private(set) var burst: Burst?

    public init(stability: Duration, initialLevel: Bool = false) {
        self.stability = stability
        stableLevel = initialLevel
        rawLevel = initialLevel
    }

    /// When the current burst resolves if no edge arrives before then.
    public var resolveTime: MonotonicTime? { burst.map { $0.lastChange + stability } }

    /// Resolves the burst if it has been steady for `stability` by `now`.
    public mutating func resolve(at now: MonotonicTime) -> Change? {
        guard let b = burst, b.lastChange + stability <= now else { return nil }
        burst = nil
        guard rawLevel != stableLevel else { return nil }  // a glitch
        stableLevel = rawLevel
        return Change(pressed: rawLevel, at: b.start)
    }

    /// Records a raw level at `time`. Call `resolve(at: time)` first: a burst that
    /// was steady for `stability` up to this edge is resolved before it.
    public mutating func record(pressed: Bool, at time: MonotonicTime) {
        guard pressed != rawLevel else { return }  // repeats the level: only marks time
        rawLevel = pressed
        if var b = burst {
            b.lastChange = time
            burst = b
        } else {
            burst = Burst(start: time, lastChange: time)
        }
    }

    /// Drops an unresolved burst: the input ended before it settled.
    public mutating func abandonBurst() {
        burst = nil
        rawLevel = stableLevel
    }
}
