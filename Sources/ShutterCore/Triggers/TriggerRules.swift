// SPDX-License-Identifier: BSD-2-Clause
/// One trigger input's rules, pure (docs/triggers.md): raw edges in, what the input asks of
/// the capture path out. Runs on the times it is given (the edges' kernel timestamps and
/// `advance(to:)`), never on a clock of its own, so tests need no real time.
///
/// - A level counts once steady for `stability` (ShutterCore's `StabilityFilter`, as the
///   button's): contact bounce and glitches shorter than that make no activation, and an
///   activation is dated at its first edge.
/// - An activation **fires** (the photo, the burst, the clip is asked for) unless it comes
///   sooner than `holdOff` after the activation that last fired, or outside the daily
///   windows (`windowOpen`, which the caller reads from a trusted wall clock); it is then
///   `ignored`, and the hold-off still counts from the last firing.
/// - A clip trigger's clip lasts while the input is active and `clipAfter` more: every
///   activation while it is on keeps it going (whatever the hold-off), and `clipEnds` comes
///   once the input has been inactive for `clipAfter` (decided only when no change dated
///   before that moment is still settling). A clip that ended otherwise (the maximum
///   duration, a fault: `clipEnded()`) is not started again until the next activation.
public struct TriggerRules: Sendable {
    public enum Action: Sendable, Equatable {
        case photo
        case burst(count: Int)
        case clip(after: Duration)
    }

    public struct Settings: Sendable, Equatable {
        public var action: Action
        public var holdOff: Duration
        public var stability: Duration

        public init(action: Action, holdOff: Duration, stability: Duration) {
            self.action = action
            self.holdOff = holdOff
            self.stability = stability
        }

        public init(_ input: ShutterConfig.Triggers.Input) {
            switch input.action {
            case .photo: action = .photo
            case .burst: action = .burst(count: input.burstCount)
            case .clip: action = .clip(after: .seconds(input.clipAfterSeconds))
            }
            holdOff = .milliseconds(Int64((input.holdOffSeconds * 1000).rounded()))
            stability = .milliseconds(input.stabilityMs)
        }
    }

    public enum Ignored: String, Sendable, Equatable {
        /// Sooner than the hold-off after the activation that last fired.
        case holdOff = "hold-off"
        /// Outside every daily window (or no trusted clock to read them).
        case outsideWindows = "outside the windows"
    }

    public enum Event: Sendable, Equatable {
        /// The debounced level changed (dated at its first edge).
        case changed(active: Bool, at: MonotonicTime)
        /// An activation that asks for the capture.
        case fired(at: MonotonicTime)
        /// An activation that asks for nothing.
        case ignored(at: MonotonicTime, Ignored)
        /// An activation while the trigger's clip is on: it goes on.
        case extended(at: MonotonicTime)
        /// The trigger's clip is due to end here: inactive for `clipAfter`.
        case clipEnds(at: MonotonicTime)
    }

    public let settings: Settings
    private var filter: StabilityFilter
    /// When the activation that last fired began.
    public private(set) var lastFired: MonotonicTime?
    /// The trigger's clip is on (asked for, not ended); `end` is when it ends with no
    /// further activation (nil while the input is active).
    public private(set) var clip: (on: Bool, end: MonotonicTime?) = (false, nil)

    public init(settings: Settings) {
        self.settings = settings
        filter = StabilityFilter(stability: settings.stability)
    }

    /// The debounced level.
    public var isActive: Bool { filter.stableLevel }

    /// A raw level (true = active, after active-low) at `time`.
    public mutating func feed(active: Bool, at time: MonotonicTime, windowOpen: Bool) -> [Event] {
        var out = advance(to: time, windowOpen: windowOpen)
        filter.record(pressed: active, at: time)
        out += advance(to: time, windowOpen: windowOpen)
        return out
    }

    /// Moves time on to `now`: what is decided by then, in the order it falls due. A change
    /// still settling that began at or before the clip's end is decided first (it may keep
    /// the clip going); the end waits for it.
    public mutating func advance(to now: MonotonicTime, windowOpen: Bool) -> [Event] {
        var out: [Event] = []
        while true {
            let end = clip.on ? clip.end : nil
            if let r = filter.resolveTime, r <= now, let b = filter.burst, end.map({ b.start <= $0 }) ?? true {
                if let change = filter.resolve(at: r) { out += changed(change, windowOpen: windowOpen) }
            } else if let end, end <= now, filter.burst.map({ $0.start > end }) ?? true {
                clip = (false, nil)
                out.append(.clipEnds(at: end))
            } else {
                return out
            }
        }
    }

    /// When the next decision falls due with no further edge.
    public var nextDeadline: MonotonicTime? {
        let end = clip.on ? clip.end : nil
        if let b = filter.burst, let r = filter.resolveTime, end.map({ b.start <= $0 }) ?? true { return r }
        return [filter.resolveTime, end].compactMap { $0 }.min()
    }

    /// The clip ended by itself (the maximum duration, a fault, a stop request): the input
    /// must become active again to start another.
    public mutating func clipEnded() { clip = (false, nil) }

    private mutating func changed(_ c: StabilityFilter.Change, windowOpen: Bool) -> [Event] {
        var out: [Event] = [.changed(active: c.pressed, at: c.at)]
        guard c.pressed else {
            if clip.on, case .clip(let after) = settings.action { clip.end = c.at + after }
            return out
        }
        if clip.on {
            clip.end = nil
            out.append(.extended(at: c.at))
        } else if !windowOpen {
            out.append(.ignored(at: c.at, .outsideWindows))
        } else if let last = lastFired, c.at - last < settings.holdOff {
            out.append(.ignored(at: c.at, .holdOff))
        } else {
            lastFired = c.at
            if case .clip = settings.action { clip = (true, nil) }
            out.append(.fired(at: c.at))
        }
        return out
    }
}
