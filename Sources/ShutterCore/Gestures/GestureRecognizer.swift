// SPDX-License-Identifier: BSD-2-Clause
/// Turns raw button edges into gestures: tap, hold, double tap and the shutdown
/// sequence (`shutdownTaps` quick taps, then a hold kept down through an LED
/// countdown: the taps' photos and the hold's clip are kept like any others). Runs on the times it is given (edge timestamps and `advance(to:)`),
/// never on a real clock, so the daemon and `shutterctl gestures` share it and
/// tests need no real time.
///
/// Every event carries the times the rules define (a press is dated at its
/// burst's first edge), so an event that can only be decided late — because a
/// burst that may move the release before a deadline is still settling — is
/// still dated exactly.
public struct GestureRecognizer: Sendable {
    public let settings: GestureSettings
    private var filter: StabilityFilter

    private enum Phase: Sendable, Equatable {
        case idle
        /// Accepted press at `start`. `announced` once holdStarted/shutdownCountdown went out.
        case pressed(start: MonotonicTime, shutdownArmed: Bool, announced: Bool)
        /// The hold hit its max duration, or shutdown fired: wait for the release.
        case waitingForRelease
    }

    private var phase: Phase = .idle
    /// A tap waiting out the double-tap window (only when doubleTapMs > 0).
    private var pendingTap: (start: MonotonicTime, end: MonotonicTime)?
    /// Quick taps in a row, for the shutdown sequence, and the last one's release.
    private var quickTaps = 0
    private var lastTapRelease: MonotonicTime?
    /// The first press of the current quick-tap run (the shutdown gesture's start).
    private var sequenceStart: MonotonicTime?

    public init(settings: GestureSettings) {
        self.settings = settings
        filter = StabilityFilter(stability: .milliseconds(settings.stabilityMs))
    }

    /// True while the (debounced) button is down.
    public var isPressed: Bool { filter.stableLevel }

    /// A raw edge (or a sample repeating the level) at `edge.time`.
    public mutating func feed(_ edge: ButtonEdge) -> [GestureEvent] {
        var out = advance(to: edge.time)
        filter.record(pressed: edge.pressed, at: edge.time)
        out += advance(to: edge.time)
        return out
    }

    /// Moves time forward to `now`, emitting everything decided by then.
    public mutating func advance(to now: MonotonicTime) -> [GestureEvent] {
        var out: [GestureEvent] = []
        while let (time, step) = nextStep(), time <= now {
            perform(step, into: &out)
        }
        return out
    }

    /// The input ended at `end` (replay): settle what is settled by then, ignore a
    /// burst still unresolved, and report a tap still waiting for a double tap.
    /// A hold still pressed stays open (its holdStarted has been emitted).
    public mutating func finish(at end: MonotonicTime) -> [GestureEvent] {
        var out = advance(to: end)
        filter.abandonBurst()
        out += advance(to: end)
        if let t = pendingTap {
            pendingTap = nil
            out.append(.tap(start: t.start, end: t.end))
        }
        return out
    }

    /// When the next decision falls due with no further edge: the daemon sleeps
    /// until then and calls `advance(to:)`.
    public var nextDeadline: MonotonicTime? { nextStep()?.0 }

    // MARK: - Scheduling

    private enum Step {
        case resolveBurst
        case holdReached(start: MonotonicTime, armed: Bool)
        case maxReached(start: MonotonicTime)
        case shutdownReached(start: MonotonicTime)
        case doubleTapWindowClosed
    }

    /// The earliest pending step. A deadline D is only decidable once no burst
    /// that began before D is still settling (that burst could date a release
    /// before D); until then the burst's resolution comes first.
    private func nextStep() -> (MonotonicTime, Step)? {
        var best: (MonotonicTime, Step)?
        func consider(_ t: MonotonicTime, _ s: Step) {
            if best == nil || t < best!.0 { best = (t, s) }
        }
        let burstStart = filter.burst?.start
        func decidable(_ deadline: MonotonicTime) -> Bool {
            guard let b = burstStart else { return true }
            return b >= deadline
        }
        if let r = filter.resolveTime { consider(r, .resolveBurst) }
        switch phase {
        case let .pressed(start, armed, announced):
            let holdAt = start + .milliseconds(settings.holdMs)
            if !announced {
                if decidable(holdAt) { consider(holdAt, .holdReached(start: start, armed: armed)) }
            } else {
                let maxAt = start + .milliseconds(settings.maxHoldMs)
                if decidable(maxAt) { consider(maxAt, .maxReached(start: start)) }
                let doneAt = holdAt + .milliseconds(settings.shutdownCountdownMs)
                if armed, doneAt < maxAt, decidable(doneAt) { consider(doneAt, .shutdownReached(start: start)) }
            }
        case .idle:
            if let t = pendingTap {
                // A press dated exactly doubleTapMs after the release still makes a
                // double tap, so the window closes just after that instant.
                let closeAt = t.end + .milliseconds(settings.doubleTapMs) + .nanoseconds(1)
                if decidable(closeAt) { consider(closeAt, .doubleTapWindowClosed) }
            }
        case .waitingForRelease:
            break
        }
        // Ties: a burst resolution first, since the change it accepts is dated earlier.
        if let r = filter.resolveTime, let b = best, r == b.0 { return (r, .resolveBurst) }
        return best
    }

    private mutating func perform(_ step: Step, into out: inout [GestureEvent]) {
        switch step {
        case .resolveBurst:
            let now = filter.resolveTime!
            if let change = filter.resolve(at: now) {
                if change.pressed { accepted(pressAt: change.at, into: &out) }
                else { accepted(releaseAt: change.at, into: &out) }
            }
        case let .holdReached(start, armed):
            flushPendingTap(into: &out)
            let at = start + .milliseconds(settings.holdMs)
            phase = .pressed(start: start, shutdownArmed: armed, announced: true)
            quickTaps = 0
            lastTapRelease = nil
            // An armed hold is still a hold: its clip is recorded and kept.
            out.append(.holdStarted(pressedAt: start, at: at))
            if armed {
                out.append(.shutdownCountdown(start: start,
                                              deadline: at + .milliseconds(settings.shutdownCountdownMs)))
            }
        case let .maxReached(start):
            let end = start + .milliseconds(settings.maxHoldMs)
            out.append(.hold(start: start, end: end))
            if case .pressed(_, true, _) = phase { out.append(.shutdownCancelled(at: end)) }
            phase = .waitingForRelease
            sequenceStart = nil
        case let .shutdownReached(start):
            let end = start + .milliseconds(settings.holdMs + settings.shutdownCountdownMs)
            out.append(.hold(start: start, end: end))
            out.append(.shutdown(start: sequenceStart ?? start, end: end))
            phase = .waitingForRelease
            sequenceStart = nil
        case .doubleTapWindowClosed:
            flushPendingTap(into: &out)
        }
    }

    // MARK: - Accepted changes

    private mutating func accepted(pressAt p: MonotonicTime, into out: inout [GestureEvent]) {
        guard case .idle = phase else { return }
        if let t = pendingTap, p - t.end > .milliseconds(settings.doubleTapMs) {
            flushPendingTap(into: &out)
        }
        var armed = false
        if settings.shutdownTaps > 0, quickTaps >= settings.shutdownTaps, let last = lastTapRelease,
           p - last <= .milliseconds(settings.shutdownGapMs) {
            armed = true
        }
        phase = .pressed(start: p, shutdownArmed: armed, announced: false)
        out.append(.pressed(at: p))
    }

    private mutating func accepted(releaseAt r: MonotonicTime, into out: inout [GestureEvent]) {
        switch phase {
        case .idle:
            return
        case .waitingForRelease:
            phase = .idle
            return
        case let .pressed(p, armed, announced):
            phase = .idle
            if announced {
                out.append(.hold(start: p, end: r))  // r < p + max, or maxReached would have fired
                if armed { out.append(.shutdownCancelled(at: r)) }
                sequenceStart = nil
                return
            }
            // A tap (released before holdMs).
            if let last = lastTapRelease, p - last <= .milliseconds(settings.shutdownGapMs) {
                quickTaps += 1
            } else {
                quickTaps = 1
                sequenceStart = p
            }
            lastTapRelease = r
            guard settings.doubleTapMs > 0 else {
                out.append(.tap(start: p, end: r))
                return
            }
            if let t = pendingTap, p - t.end <= .milliseconds(settings.doubleTapMs) {
                pendingTap = nil
                out.append(.doubleTap(start: t.start, end: r))
            } else {
                flushPendingTap(into: &out)
                pendingTap = (p, r)
            }
        }
    }

    private mutating func flushPendingTap(into out: inout [GestureEvent]) {
        if let t = pendingTap {
            pendingTap = nil
            out.append(.tap(start: t.start, end: t.end))
        }
    }
}
