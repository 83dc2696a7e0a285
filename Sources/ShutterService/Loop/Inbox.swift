// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import Synchronization

/// The loop's one queue of events and its one wait (rpicam-apps' `Wait()`): any thread
/// posts without blocking (a device's own queue posts its frames and edges here: one hop
/// to the loop), and `next(until:)` gives the next event, or `.tick` once the loop's next
/// deadline passes first. The deadline is the wait's own argument: no timer task.
///
/// Bounds: frames waiting beyond the camera's stream depth let the oldest go (its buffer
/// back to the camera, counted there); button events beyond `buttonBound` are refused
/// (counted by the button). Everything else is kept: requests, results and signals are
/// few, and each is owed an answer.
final class Inbox: Sendable {
    static let buttonBound = 64

    private struct State {
        var events: [ServiceEvent] = []
        var frames = 0
        var buttonEvents = 0
        var waiter: CheckedContinuation<Void, Never>?
        var closed = false
        /// When the last tick was given: a deadline due since then is ticked before any
        /// event; one already ticked that stays due lets the events go first (it cannot starve them).
        var lastTick: MonotonicTime?
    }

    private let state = Mutex(State())
    private let clock: any MonotonicClock

    init(clock: any MonotonicClock) {
        self.clock = clock
    }

    /// Button events posted and not yet taken by the loop (ButtonPath decides a due
    /// deadline at once only when none waits).
    var buttonEventsWaiting: Bool { state.withLock { $0.buttonEvents > 0 } }

    /// An event; false once closed (nobody takes events any more).
    @discardableResult
    func post(_ event: ServiceEvent) -> Bool {
        let (taken, waiter): (Bool, CheckedContinuation<Void, Never>?) = state.withLock { s in
            guard !s.closed else { return (false, nil) }
            s.events.append(event)
            return (true, Self.takeWaiter(&s))
        }
        waiter?.resume()
        return taken
    }

    /// A frame, keeping at most `depth` waiting: returns the oldest let go to make room,
    /// for the camera to count and release outside its locks.
    func post(frame: Frame, depth: Int) -> Frame? {
        let (dropped, waiter): (Frame?, CheckedContinuation<Void, Never>?) = state.withLock { s in
            guard !s.closed else { return (frame, nil) }
            var dropped: Frame?
            if s.frames >= max(1, depth), let i = s.events.firstIndex(where: \.isFrame),
               case .frame(let old) = s.events.remove(at: i) {
                dropped = old
                s.frames -= 1
            }
            s.events.append(.frame(frame))
            s.frames += 1
            return (dropped, Self.takeWaiter(&s))
        }
        waiter?.resume()
        return dropped
    }

    /// A button event; false (not taken) while `buttonBound` of them wait.
    func post(button e: ButtonEvent) -> Bool {
        let (taken, waiter): (Bool, CheckedContinuation<Void, Never>?) = state.withLock { s in
            guard !s.closed, s.buttonEvents < Self.buttonBound else { return (false, nil) }
            s.events.append(.button(e))
            s.buttonEvents += 1
            return (true, Self.takeWaiter(&s))
        }
        waiter?.resume()
        return taken
    }

    /// No more events: what is queued is still given, then nil.
    func close() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.closed = true
            return Self.takeWaiter(&s)
        }
        waiter?.resume()
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
            let step: Step = state.withLock { s in
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
                if e.isFrame { s.frames -= 1 } else if case .button = e { s.buttonEvents -= 1 }
                return .give(e)
            }
            switch step {
            case .give(let e): return e
            case .end: return nil
            case .wait(let t): await wait(until: t)
            }
        }
    }

    /// Returns at a post, at `deadline` on the clock, or when cancelled.
    private func wait(until deadline: MonotonicTime) async {
        let clock = self.clock
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await clock.sleep(until: deadline) }
            group.addTask { await self.posted() }
            await group.next()
            group.cancelAll()
        }
    }

    private func posted() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now: Bool = state.withLock { s in
                    if !s.events.isEmpty || s.closed || Task.isCancelled { return true }
                    s.waiter = c
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            state.withLock { s in Self.takeWaiter(&s) }?.resume()
        }
    }

    private static func takeWaiter(_ s: inout State) -> CheckedContinuation<Void, Never>? {
        defer { s.waiter = nil }
        return s.waiter
    }
}

extension ServiceEvent {
    var isFrame: Bool {
        if case .frame = self { return true }
        return false
    }
}
