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
            try await Task.sleep(nanoseconds: UInt64(remaining))
        } else {
            try Task.checkCancellation()
        }
    }
}

/// A clock that moves only when a test says so. Sleepers wake when `advance`
/// passes their deadline.
public final class ManualClock: MonotonicClock {
    private struct Sleeper {
        let id: UInt64
        let deadline: MonotonicTime
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: MonotonicTime
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    public init(start: MonotonicTime = .milliseconds(0)) {
        state = Mutex(State(now: start))
    }

    public func now() -> MonotonicTime { state.withLock { $0.now } }

    /// Number of tasks currently sleeping on this clock (lets a test wait until
    /// the code under test has reached its timer).
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The earliest deadline a task is sleeping until, if any.
    public var nextDeadline: MonotonicTime? { state.withLock { $0.sleepers.map(\.deadline).min() } }

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

    public func advance(to t: MonotonicTime) {
        let due: [Sleeper] = state.withLock { s in
            if t > s.now { s.now = t }
            let due = s.sleepers.filter { $0.deadline <= s.now }
            s.sleepers.removeAll { $0.deadline <= s.now }
            return due
        }
        for s in due.sorted(by: { $0.deadline < $1.deadline }) { s.continuation.resume() }
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
                    s.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: c))
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
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }
}
