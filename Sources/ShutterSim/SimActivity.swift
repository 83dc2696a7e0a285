// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import Synchronization

/// The simulated board's own work (a frame producer, a still's mode switch, an
/// autofocus cycle, the microphone), tracked so that a test on a `ManualClock`
/// can wait until all of it is asleep on the clock. From then on only advancing
/// the clock makes it move, so what happens next is decided by the test alone.
///
/// A call's activity holds its caller's `WorkToken` (`begin(call:)`): a service on the
/// same clock (the in-process tests' rig) counts its own work in flight, and the caller
/// waiting for the board is the board's work until the call returns.
///
/// Lock order: a device's state lock may be held while calling into this type
/// (and into a `SimStream`); this type never calls out while holding its own, but
/// to hand a caller's token over (atomics, and at most a resume).
final class SimActivity: Sendable {
    enum Phase: Equatable {
        /// Running: may produce something without the clock moving.
        case busy
        /// Waiting for another activity of the same device (a still queued behind a still).
        case blocked
        /// Registered as a sleeper on the clock, until this deadline.
        case asleep(until: MonotonicTime)
    }

    private struct State {
        var phases: [UInt64: Phase] = [:]
        /// The tokens of the callers whose call an activity is (`begin(call:)`).
        var callers: [UInt64: WorkToken] = [:]
        var nextID: UInt64 = 0
        /// Bumped on every change that may make a waiter's condition true.
        var changes: UInt64 = 0
        var waiters: [CheckedContinuation<Void, Never>] = []

        mutating func takeWaiters() -> [CheckedContinuation<Void, Never>] {
            changes &+= 1
            defer { waiters = [] }
            return waiters
        }
    }

    let clock: any MonotonicClock
    private let state = Mutex(State())

    init(clock: any MonotonicClock) {
        self.clock = clock
    }

    /// A new activity, busy. `call`: the activity is the work of the caller's call (a start,
    /// an autofocus cycle, a still), which returns when it ends: the caller's `WorkToken` is
    /// given back (the caller waits, as the activity's phases say) and taken again at `end`,
    /// before the activity is gone, so the caller's work counts again before this stops
    /// counting. Frame producers are no call: they outlive the call that started them.
    func begin(call: Bool = false) -> UInt64 {
        state.withLock { s in
            s.nextID += 1
            s.phases[s.nextID] = .busy
            if call, let token = WorkToken.releaseCurrent() { s.callers[s.nextID] = token }
            return s.nextID
        }
    }

    func end(_ id: UInt64) {
        let waiters = state.withLock { s in
            s.callers.removeValue(forKey: id)?.retake()
            s.phases[id] = nil
            return s.takeWaiters()
        }
        for w in waiters { w.resume() }
    }

    func set(_ id: UInt64, _ phase: Phase) {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { s in
            guard s.phases[id] != nil else { return [] }
            s.phases[id] = phase
            return s.takeWaiters()
        }
        for w in waiters { w.resume() }
    }

    /// Something a settle condition reads changed outside this type (a stream's consumer).
    func changed() {
        let waiters = state.withLock { $0.takeWaiters() }
        for w in waiters { w.resume() }
    }

    /// Sleeps on the clock until `deadline` as activity `id`. On a `ManualClock`
    /// the activity counts as asleep only once the clock has registered it, so an
    /// `advance` right after a settle cannot miss it. Throws `CancellationError`.
    func sleep(_ id: UInt64, until deadline: MonotonicTime) async throws {
        defer { set(id, .busy) }
        if let manual = clock as? ManualClock {
            try await manual.sleep(until: deadline, whenSuspended: { [self] in set(id, .asleep(until: deadline)) })
        } else {
            set(id, .asleep(until: deadline))
            try await clock.sleep(until: deadline)
        }
    }

    /// True when every activity is blocked or asleep until after now.
    var isQuiet: Bool {
        let now = clock.now()
        return state.withLock { s in
            s.phases.values.allSatisfy { phase in
                switch phase {
                case .busy: return false
                case .blocked: return true
                case .asleep(let until): return until > now
                }
            }
        }
    }

    /// Suspends until `condition` holds, re-checking it after every change
    /// reported here (no polling, no real time).
    func wait(until condition: () -> Bool) async {
        while true {
            let seen = state.withLock { $0.changes }
            if condition() { return }
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let again: Bool = state.withLock { s in
                    if s.changes != seen { return true }
                    s.waiters.append(c)
                    return false
                }
                if again { c.resume() }
            }
        }
    }
}
