// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An alarm on CLOCK_MONOTONIC (`SystemClock.makeAlarm`), served by the process's one
/// clock thread. Its deadline is kept in SystemAlarms' armed list, under that lock.
final class SystemAlarm: ClockAlarm, Sendable {
    let fire: @Sendable () -> Void

    init(_ fire: @escaping @Sendable () -> Void) { self.fire = fire }

    func set(_ deadline: MonotonicTime) { SystemAlarms.shared.set(self, to: deadline) }
    func cancel() { SystemAlarms.shared.set(self, to: nil) }
}

/// One thread that fires every `SystemAlarm` of the process at its deadline: a
/// condition variable on CLOCK_MONOTONIC waited on until the earliest. Setting an alarm
/// again allocates nothing (the armed list keeps its room); the thread starts at the
/// first alarm made. Alarms fire one at a time, outside the lock: each must be quick
/// (the service's are: resume a waiter, start a task).
// Unchecked: owns a pthread mutex and CLOCK_MONOTONIC condition guarding `armed`; a Mutex has no timed wait.
final class SystemAlarms: @unchecked Sendable {
    static let shared: SystemAlarms = {
        let alarms = SystemAlarms()
        PlainThread.start(name: "shutter.clock") { alarms.serve() }
        return alarms
    }()

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>
    /// The alarms set, each once, with its deadline.
    private var armed: [(alarm: SystemAlarm, deadline: MonotonicTime)] = []

    private init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        cond = .allocate(capacity: 1)
        cond.initialize(to: pthread_cond_t())
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        #if canImport(Glibc)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        #endif
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
        armed.reserveCapacity(8)
    }

    func set(_ alarm: SystemAlarm, to deadline: MonotonicTime?) {
        pthread_mutex_lock(mutex)
        let i = armed.firstIndex { $0.alarm === alarm }
        if let deadline {
            if let i { armed[i].deadline = deadline } else { armed.append((alarm, deadline)) }
        } else if let i {
            armed.remove(at: i)
        }
        // A cancel needs no wake: the thread finds nothing due at its old deadline and waits on.
        if deadline != nil { pthread_cond_signal(cond) }
        pthread_mutex_unlock(mutex)
    }

    private func serve() {
        pthread_mutex_lock(mutex)
        while true {
            var earliest: Int?
            for i in armed.indices where earliest.map({ armed[i].deadline < armed[$0].deadline }) ?? true {
                earliest = i
            }
            guard let e = earliest else {
                pthread_cond_wait(cond, mutex)
                continue
            }
            let (next, deadline) = armed[e]
            if deadline > SystemClock().now() {
                wait(until: deadline)
                continue
            }
            armed.remove(at: e)
            pthread_mutex_unlock(mutex)
            next.fire()
            pthread_mutex_lock(mutex)
        }
    }

    /// Waits on the condition until `deadline` (or a signal), the mutex held.
    private func wait(until deadline: MonotonicTime) {
        #if canImport(Glibc)
        var ts = timespec(tv_sec: Int(deadline.nanoseconds / 1_000_000_000),
                          tv_nsec: Int(deadline.nanoseconds % 1_000_000_000))
        _ = pthread_cond_timedwait(cond, mutex, &ts)
        #else
        let remaining = max(0, deadline.nanoseconds - SystemClock().now().nanoseconds)
        var ts = timespec(tv_sec: Int(remaining / 1_000_000_000), tv_nsec: Int(remaining % 1_000_000_000))
        _ = pthread_cond_timedwait_relative_np(cond, mutex, &ts)
        #endif
    }
}
