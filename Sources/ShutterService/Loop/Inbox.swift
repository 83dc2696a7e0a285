// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import Synchronization

/// The loop's one queue of events and its one wait (rpicam-apps' `Wait()`): any thread
/// posts without blocking (a device's own queue posts its frames and edges here: one hop
/// to the loop), and `next(until:)` gives the next event, or `.tick` once the loop's next
/// deadline passes first. The deadline is the wait's own argument: no timer task.
///
/// The wait allocates nothing and starts no task: one continuation, resumed by the first
/// of a post, the clock's alarm (made once, set again for each deadline: on the service's
/// clock, the real one or a test's manual one) and a cancellation.
///
/// Work in flight: the loop's `WorkToken` (the task calling `next`) is given back while
/// it waits, and taken again by whatever wakes it (a post, the alarm, the close) before
/// it is woken. So "no work in flight" includes "every event posted has been handled".
///
/// Bounds: frames waiting beyond the camera's stream depth let the oldest go (its buffer
/// back to the camera, counted there); button events beyond `buttonBound` are refused
/// (counted by the button), and so are the trigger inputs' beyond as many. Everything else
/// is kept: requests, results and signals are few, and each is owed an answer.
final class Inbox: Sendable {
    static let buttonBound = 64

    private struct State {
        var events: [ServiceEvent] = []
        var frames = 0
        var buttonEvents = 0
        var triggerEvents = 0
        /// The loop, while it waits, and its token.
        var waiter: Waiter?
        var closed = false
        /// When the last tick was given: a deadline due since then is ticked before any
        /// event; one already ticked that stays due lets the events go first (it cannot starve them).
        var lastTick: MonotonicTime?
        /// Waits so far, and those a post ended (the rest: the alarm, a cancellation).
        var waits = 0
        var wokenByPost = 0
    }

    private struct Waiter {
        let continuation: UnsafeContinuation<Void, Never>
        let token: WorkToken?
    }

    /// The state, shared with the alarm's action.
    private final class Core: Sendable {
        let state = Mutex(State())

        /// Wakes the loop if it waits: its token first. `posted`: a post (or the close) woke it.
        func wake(posted: Bool) {
            let waiter: Waiter? = state.withLock { s in
                defer { s.waiter = nil }
                if posted, s.waiter != nil { s.wokenByPost += 1 }
                return s.waiter
            }
            waiter?.token?.retake()
            waiter?.continuation.resume()
        }
    }

    private let core: Core
    private let clock: any MonotonicClock
    /// Wakes the loop at the deadline it waits for.
    private let alarm: any ClockAlarm

    init(clock: any MonotonicClock) {
        self.clock = clock
        let core = Core()
        self.core = core
        alarm = clock.makeAlarm { core.wake(posted: false) }
    }

    /// Button events posted and not yet taken by the loop (ButtonPath decides a due
    /// deadline at once only when none waits).
    var buttonEventsWaiting: Bool { core.state.withLock { $0.buttonEvents > 0 } }

    /// Trigger events posted and not yet taken by the loop (as `buttonEventsWaiting`, for
    /// the trigger inputs' deadlines).
    var triggerEventsWaiting: Bool { core.state.withLock { $0.triggerEvents > 0 } }

    /// A trigger input's event; false (not taken) while `buttonBound` of them wait.
    func post(trigger line: Int, _ e: ButtonEvent) -> Bool {
        let taken: Bool = core.state.withLock { s in
            guard !s.closed, s.triggerEvents < Self.buttonBound else { return false }
            s.events.append(.trigger(line: line, e))
            s.triggerEvents += 1
            return true
        }
        if taken { core.wake(posted: true) }
        return taken
    }

    /// An event; false once closed (nobody takes events any more).
    @discardableResult
    func post(_ event: ServiceEvent) -> Bool {
        let taken: Bool = core.state.withLock { s in
            guard !s.closed else { return false }
            s.events.append(event)
            return true
        }
        if taken { core.wake(posted: true) }
        return taken
    }

    /// A frame, keeping at most `depth` waiting: returns the oldest let go to make room,
    /// for the camera to count and release outside its locks.
    func post(frame: Frame, depth: Int) -> Frame? {
        let (taken, dropped): (Bool, Frame?) = core.state.withLock { s in
            guard !s.closed else { return (false, frame) }
            var dropped: Frame?
            if s.frames >= max(1, depth), let i = s.events.firstIndex(where: \.isFrame),
               case .frame(let old) = s.events.remove(at: i) {
                dropped = old
                s.frames -= 1
            }
            s.events.append(.frame(frame))
            s.frames += 1
            return (true, dropped)
        }
        if taken { core.wake(posted: true) }
        return dropped
    }

    /// A button event; false (not taken) while `buttonBound` of them wait.
    func post(button e: ButtonEvent) -> Bool {
        let taken: Bool = core.state.withLock { s in
            guard !s.closed, s.buttonEvents < Self.buttonBound else { return false }
            s.events.append(.button(e))
            s.buttonEvents += 1
            return true
        }
        if taken { core.wake(posted: true) }
        return taken
    }

    /// No more events: what is queued is still given, then nil.
    func close() {
        core.state.withLock { $0.closed = true }
        core.wake(posted: true)
    }

    /// A deadline that stays due after its tick (a part that waits for something, as the
    /// encoder's progress) is ticked again at most this often: it neither spins the CPU nor
    /// starves the events (the frames, the job results) that would move it.
    static let retick = Duration.milliseconds(50)

    /// The next event, or `.tick` once `deadline` passes before one comes; nil once closed and
    /// empty. A deadline newly due is ticked before the events waiting; one already ticked
    /// lets them go first.
    func next(until deadline: MonotonicTime) async -> ServiceEvent? {
        let clock = self.clock
        while true {
            enum Step { case give(ServiceEvent), end, wait(until: MonotonicTime) }
            let step: Step = core.state.withLock { s in
                // Read under the lock: every event queued was posted at or before this
                // time, so a frame stamped at the deadline never goes before its tick.
                let now = clock.now()
                let stale = s.lastTick.map { $0 >= deadline } ?? false  // ticked since it fell due
                let retickAt = s.lastTick.map { $0 + Self.retick } ?? now
                if now >= deadline, !s.closed, !stale || (s.events.isEmpty && now >= retickAt) {
                    s.lastTick = now
                    return .give(.tick)
                }
                guard !s.events.isEmpty else {
                    if s.closed { return .end }
                    return .wait(until: stale ? retickAt : deadline)
                }
                let e = s.events.removeFirst()
                if e.isFrame { s.frames -= 1 } else if case .button = e { s.buttonEvents -= 1 } else if case .trigger = e {
                    s.triggerEvents -= 1
                }
                return .give(e)
            }
            switch step {
            case .give(let e): return e
            case .end: return nil
            case .wait(let t): await wait(until: t)
            }
        }
    }

    /// Returns at a post, at `deadline` on the clock, or when cancelled. One waiter at a
    /// time (the loop).
    private func wait(until deadline: MonotonicTime) async {
        let core = self.core, alarm = self.alarm, clock = self.clock
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (c: UnsafeContinuation<Void, Never>) in
                // Armed before the loop is seen waiting (its token given back): whoever waits
                // for the loop to be idle and then moves the clock finds the alarm set. Not
                // under the lock: a manual clock fires a passed deadline in `set`, and the
                // fire takes the lock. One that fires before the waiter is recorded finds
                // none; the check below sees the deadline passed and does not wait.
                alarm.set(deadline)
                let now: Bool = core.state.withLock { s in
                    precondition(s.waiter == nil, "the inbox has one reader, the loop")
                    if !s.events.isEmpty || s.closed || Task.isCancelled || clock.now() >= deadline { return true }
                    // Given back under the lock a waker takes: it is taken again before the wake.
                    s.waiter = Waiter(continuation: c, token: WorkToken.releaseCurrent())
                    s.waits += 1
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            core.wake(posted: false)
        }
        alarm.cancel()
    }

    /// The waits so far (each one continuation, no task), and those a post ended.
    var waits: (all: Int, endedByPost: Int) { core.state.withLock { ($0.waits, $0.wokenByPost) } }

    /// Whether the loop waits now (nothing to give it, its deadline not passed).
    var isWaiting: Bool { core.state.withLock { $0.waiter != nil } }
}

extension ServiceEvent {
    var isFrame: Bool {
        if case .frame = self { return true }
        return false
    }
}
