// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The clock every timer and state machine runs on. Injected, so the logic is
/// tested on a `ManualClock` and never needs real time.
public protocol MonotonicClock: Sendable {
    func now() -> MonotonicTime
    /// Suspends until `now() >= deadline`. Throws `CancellationError` when cancelled.
    func sleep(until deadline: MonotonicTime) async throws
    /// An alarm on this clock, made once and set again for every deadline: `fire` is called
    /// (on a thread of the clock's) once the clock passes the deadline it was set to. No
    /// task, no allocation per deadline: a wait that is set often (the service's inbox,
    /// 60 times a second) sets one alarm again instead of starting a sleeping task.
    func makeAlarm(_ fire: @escaping @Sendable () -> Void) -> any ClockAlarm
}

/// An alarm of a `MonotonicClock` (`makeAlarm`).
public protocol ClockAlarm: Sendable {
    /// Fires once the clock reaches `deadline` (soon when it has already), instead of
    /// any deadline set before.
    func set(_ deadline: MonotonicTime)
    /// No deadline: it does not fire (unless it is firing now).
    func cancel()
}

extension MonotonicClock {
    public func sleep(for duration: Duration) async throws {
        try await sleep(until: now() + duration)
    }
}

/// CLOCK_MONOTONIC, the kernel's clock for GPIO edges, V4L2/libcamera sensor
/// timestamps and ALSA's monotonic timestamps.
public struct SystemClock: MonotonicClock {
    public init() {}

    public func now() -> MonotonicTime {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return MonotonicTime(nanoseconds: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec))
    }

    public func sleep(until deadline: MonotonicTime) async throws {
        let remaining = deadline.nanoseconds - now().nanoseconds
        if remaining > 0 {
            // Only a ManualClock hands a sleeper's token over exactly (a test waits for it);
            // here it is given back for the sleep and taken again after.
            let token = WorkToken.releaseCurrent()
            defer { token?.retake() }
            try await Task.sleep(nanoseconds: UInt64(remaining))
        } else {
            try Task.checkCancellation()
        }
    }

    /// Fired on the process's one clock thread (`SystemAlarms`).
    public func makeAlarm(_ fire: @escaping @Sendable () -> Void) -> any ClockAlarm {
        SystemAlarm(fire)
    }
}

/// A clock that moves only when a test says so. Sleepers wake when `advance`
/// passes their deadline; alarms fire in `advance`, on the caller's thread.
///
/// A sleeper that holds a `WorkToken` gives it back while it sleeps, and `advance` takes
/// it again before waking it: from the moment the clock passes its deadline until it
/// sleeps again (or its work ends), the sleeper's work counts as in flight.
public final class ManualClock: MonotonicClock {
    private struct Sleeper {
        let id: UInt64
        let deadline: MonotonicTime
        let wake: Wake
    }

    private enum Wake {
        case task(CheckedContinuation<Void, any Error>, WorkToken?)
        case alarm(@Sendable () -> Void)
    }

    private struct State {
        var now: MonotonicTime
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
        var sleeps = 0
        var alarms = 0
        var alarmSets = 0
    }

    private let state: Mutex<State>

    public init(start: MonotonicTime = .milliseconds(0)) {
        state = Mutex(State(now: start))
    }

    public func now() -> MonotonicTime { state.withLock { $0.now } }

    /// Number of tasks currently sleeping on this clock (lets a test wait until
    /// the code under test has reached its timer). Alarms are not counted.
    public var sleeperCount: Int { state.withLock { $0.sleepers.filter { if case .task = $0.wake { true } else { false } }.count } }

    /// The earliest deadline a task is sleeping until or an alarm is set to, if any.
    public var nextDeadline: MonotonicTime? { state.withLock { $0.sleepers.map(\.deadline).min() } }

    /// How many times a task went to sleep on this clock (it did not wake at once), how
    /// many alarms were made, and how many times one was set: what a wait costs.
    public var usage: (sleeps: Int, alarms: Int, alarmSets: Int) {
        state.withLock { ($0.sleeps, $0.alarms, $0.alarmSets) }
    }

    public func advance(by d: Duration) { advance(to: now() + d) }

    /// Moves the clock to `now() + d` one deadline at a time; see `advance(to:settle:)`.
    public func advance(by d: Duration, settle: @Sendable () async -> Void) async {
        await advance(to: now() + d, settle: settle)
    }

    /// Moves the clock to `target` one deadline at a time, as real time would:
    /// wakes the sleepers due at the next deadline, awaits `settle` (the test's
    /// "whatever woke has done its work and is asleep again"), and goes on.
    /// Deadlines that `settle`'s work sets up on the way are honoured too. Ends
    /// at `target` (after a last `settle`), even when nothing sleeps. Sleepers due
    /// at the same instant wake together.
    public func advance(to target: MonotonicTime, settle: @Sendable () async -> Void) async {
        await settle()
        while true {
            let next = min(target, nextDeadline ?? target)
            advance(to: next)
            await settle()
            if now() >= target { return }
        }
    }

    /// Moves the clock to `t` (never back), then wakes the sleepers and fires the alarms
    /// due, in the order of their deadlines, before it returns.
    public func advance(to t: MonotonicTime) {
        let due: [Sleeper] = state.withLock { s in
            if t > s.now { s.now = t }
            let due = s.sleepers.filter { $0.deadline <= s.now }
            s.sleepers.removeAll { $0.deadline <= s.now }
            return due
        }
        for s in due.sorted(by: { $0.deadline < $1.deadline }) { Self.wake(s.wake) }
    }

    private static func wake(_ w: Wake) {
        switch w {
        case .task(let c, let token):
            token?.retake()
            c.resume()
        case .alarm(let fire):
            fire()
        }
    }

    public func sleep(until deadline: MonotonicTime) async throws {
        try await sleep(until: deadline, whenSuspended: nil)
    }

    /// `sleep(until:)` that calls `whenSuspended` once the sleeper is registered,
    /// so that from then on an `advance` past `deadline` wakes it. Not called when
    /// the deadline has already passed (no suspension). Lets a test helper tell
    /// "asleep on the clock" from "about to sleep" without polling.
    public func sleep(until deadline: MonotonicTime, whenSuspended: (@Sendable () -> Void)?) async throws {
        let id: UInt64 = state.withLock { s in s.nextID += 1; return s.nextID }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                let resumeNow: Bool = state.withLock { s in
                    if deadline <= s.now || Task.isCancelled { return true }
                    // Given back under the lock `advance` takes: it is taken again before the wake.
                    s.sleepers.append(Sleeper(id: id, deadline: deadline, wake: .task(c, WorkToken.releaseCurrent())))
                    s.sleeps += 1
                    return false
                }
                if resumeNow { c.resume() } else { whenSuspended?() }
            }
            try Task.checkCancellation()
        } onCancel: {
            let cancelled: Sleeper? = state.withLock { s in
                guard let i = s.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return s.sleepers.remove(at: i)
            }
            if case .task(let c, let token)? = cancelled?.wake {
                token?.retake()
                c.resume(throwing: CancellationError())
            }
        }
    }

    /// Fired in `advance` (or in `set`, for a deadline already passed), on the caller's thread.
    public func makeAlarm(_ fire: @escaping @Sendable () -> Void) -> any ClockAlarm {
        let id: UInt64 = state.withLock { s in
            s.nextID += 1
            s.alarms += 1
            return s.nextID
        }
        return ManualAlarm(clock: self, id: id, fire: fire)
    }

    fileprivate func set(alarm id: UInt64, to deadline: MonotonicTime?, fire: @escaping @Sendable () -> Void) {
        let now: Bool = state.withLock { s in
            s.sleepers.removeAll { $0.id == id }
            guard let deadline else { return false }
            s.alarmSets += 1
            if deadline <= s.now { return true }
            s.sleepers.append(Sleeper(id: id, deadline: deadline, wake: .alarm(fire)))
            return false
        }
        if now { fire() }
    }
}

private final class ManualAlarm: ClockAlarm {
    let clock: ManualClock
    let id: UInt64
    let fire: @Sendable () -> Void

    init(clock: ManualClock, id: UInt64, fire: @escaping @Sendable () -> Void) {
        self.clock = clock
        self.id = id
        self.fire = fire
    }

    func set(_ deadline: MonotonicTime) { clock.set(alarm: id, to: deadline, fire: fire) }
    func cancel() { clock.set(alarm: id, to: nil, fire: fire) }
}
