// SPDX-License-Identifier: BSD-2-Clause
import Synchronization

/// The one fact "work in flight": how much of a service's work can still go on without
/// its clock moving. A test on a `ManualClock` waits here until it is none (`untilIdle`,
/// no polling) before it moves the clock on; the service itself never reads it.
///
/// What counts is work that ends without the clock: a block queued on a dispatch queue
/// (a JPEG, an fsync), a frame in an encoder's queue, a task doing CPU work (a `WorkToken`
/// it holds). What does not count is a wait that only the clock ends: a task asleep on
/// the clock, waiting for a frame, for another's result, for a post. Such a task gives
/// its token back while it waits (`WorkToken`), and whoever wakes it takes the token
/// again for it *before* waking it, so there is no instant at which the work is on its
/// way and nothing counts it.
///
/// Cost: one atomic add at each start and end.
public final class InFlight: Sendable {
    /// The count (low 32 bits) and the number of changes so far (high 32 bits, wrapping),
    /// in one word, so that `snapshot` reads both at once.
    private let word = Atomic<UInt64>(0)
    /// Tasks in `untilIdle`: `end` looks for them only when there are some.
    private let watchers = Atomic<Int>(0)
    private let waiters = Mutex<[UnsafeContinuation<Void, Never>]>([])

    public init() {}

    /// One more piece of work (a block queued, an item for a thread).
    public func begin() {
        word.wrappingAdd(1 | 1 << 32, ordering: .sequentiallyConsistent)
    }

    /// A piece of work `begin` counted has ended.
    public func end() {
        // +2^32 - 1: one change more, one piece less (never below zero: each end has its begin).
        let (_, new) = word.wrappingAdd(0xFFFF_FFFF, ordering: .sequentiallyConsistent)
        if new & 0xFFFF_FFFF == 0, watchers.load(ordering: .sequentiallyConsistent) > 0 { wakeWatchers() }
    }

    /// A task's share: counted from now until it ends (`WorkToken`).
    public func token() -> WorkToken { WorkToken(self) }

    /// The work in flight now.
    public var count: Int { Int(word.load(ordering: .sequentiallyConsistent) & 0xFFFF_FFFF) }

    /// The count and how many times it changed (wrapping): equal snapshots taken around
    /// another check say nothing started or ended in between.
    public var snapshot: Snapshot {
        let w = word.load(ordering: .sequentiallyConsistent)
        return Snapshot(count: Int(w & 0xFFFF_FFFF), changes: UInt32(truncatingIfNeeded: w >> 32))
    }

    public struct Snapshot: Equatable, Sendable {
        public var count: Int
        public var changes: UInt32
    }

    /// Returns once no work is in flight (at once if none is), or when cancelled. Woken by
    /// the `end` that reaches zero: it does not poll.
    public func untilIdle() async {
        while count > 0 && !Task.isCancelled {
            await withTaskCancellationHandler {
                await withUnsafeContinuation { (c: UnsafeContinuation<Void, Never>) in
                    let now: Bool = waiters.withLock { w in
                        // Seen by an `end` from here on; then the count is read again, so an
                        // end that reached zero just before is not missed either.
                        watchers.add(1, ordering: .sequentiallyConsistent)
                        if count == 0 || Task.isCancelled {
                            watchers.subtract(1, ordering: .sequentiallyConsistent)
                            return true
                        }
                        w.append(c)
                        return false
                    }
                    if now { c.resume() }
                }
            } onCancel: {
                wakeWatchers()
            }
        }
    }

    private func wakeWatchers() {
        let woken: [UnsafeContinuation<Void, Never>] = waiters.withLock { w in
            defer { w = [] }
            watchers.subtract(w.count, ordering: .sequentiallyConsistent)
            return w
        }
        for c in woken { c.resume() }
    }
}

/// A task's share of `InFlight`: held while the task works, given back while it waits for
/// something only the clock brings (an aware wait: `ManualClock.sleep`, the service's
/// inbox, a `Wakeup`, a simulated device's call), and taken again by whoever ends that
/// wait, before the task runs. A token belongs to the task that `run`s it: the tasks it
/// starts see it as `current` too, but only its own task gives it back.
///
/// A token dropped while held ends then (deinit): work that ended without saying so does
/// not keep the count up for ever.
public final class WorkToken: Sendable {
    /// The token of the work this task does, if any (see `run`).
    @TaskLocal public static var current: WorkToken?

    private enum Phase: UInt8 { case held, away, ended }

    public let work: InFlight
    private let phase = Atomic<UInt8>(Phase.held.rawValue)
    /// The task that runs it (`UnsafeCurrentTask`'s hash), 0 before `run`.
    private let owner = Atomic<Int>(0)

    fileprivate init(_ work: InFlight) {
        self.work = work
        work.begin()
    }

    deinit { end() }

    /// Runs `body` as this token's task: its aware waits give the token back while they wait.
    public func run<T>(_ body: () async throws -> T) async rethrows -> T {
        owner.store(Self.taskID(), ordering: .sequentiallyConsistent)
        return try await Self.$current.withValue(self) { try await body() }
    }

    /// The work is done (once; later calls do nothing).
    public func end() {
        let was = phase.exchange(Phase.ended.rawValue, ordering: .sequentiallyConsistent)
        if was == Phase.held.rawValue { work.end() }
    }

    /// Gives the token back (the task waits for something only the clock or another brings);
    /// false when it was not held.
    @discardableResult
    public func release() -> Bool {
        let r = phase.compareExchange(expected: Phase.held.rawValue, desired: Phase.away.rawValue,
                                      ordering: .sequentiallyConsistent)
        if r.exchanged { work.end() }
        return r.exchanged
    }

    /// Takes the token again for its task, before the task runs on: called by whoever ends its wait.
    public func retake() {
        let r = phase.compareExchange(expected: Phase.away.rawValue, desired: Phase.held.rawValue,
                                      ordering: .sequentiallyConsistent)
        if r.exchanged { work.begin() }
    }

    /// For an aware wait, as it registers its waiter (under the lock a waker takes): the
    /// current task's token, given back, for the waker to `retake`; nil when the task holds
    /// none (or it is someone else's, inherited).
    public static func releaseCurrent() -> WorkToken? {
        guard let t = current, t.owner.load(ordering: .sequentiallyConsistent) == taskID(), t.release() else { return nil }
        return t
    }

    private static func taskID() -> Int {
        withUnsafeCurrentTask { $0?.hashValue ?? 0 }
    }
}
