// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An alarm on CLOCK_MONOTONIC (`SystemClock.makeAlarm`), served by the process's one
/// clock thread.
final class SystemAlarm: ClockAlarm, @unchecked Sendable {
    // Unchecked: `deadline` is read and written under SystemAlarms' lock only.
    let fire: @Sendable () -> Void
    var deadline: MonotonicTime?

    init(_ fire: @escaping @Sendable () -> Void) { self.fire = fire }

    func set(_ deadline: MonotonicTime) { SystemAlarms.shared.set(self, to: deadline) }
    func cancel() { SystemAlarms.shared.set(self, to: nil) }
}

/// One thread that fires every `SystemAlarm` of the process at its deadline: a
/// condition variable on CLOCK_MONOTONIC waited on until the earliest. Setting an alarm
/// again allocates nothing (the armed list keeps its room); the thread starts at the
/// first alarm made. Alarms fire one at a time, outside the lock: each must be quick
/// (the service's are: resume a waiter, start a task).
final class SystemAlarms: @unchecked Sendable {
    // Unchecked: `armed` and each alarm's deadline are touched with `mutex` held.
    static let shared: SystemAlarms = {
        let alarms = SystemAlarms()
        PlainThread.start(name: "shutter.clock") { alarms.serve() }
        return alarms
    }()

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>
    private var armed: [SystemAlarm] = []

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
        let wasArmed = alarm.deadline != nil
        alarm.deadline = deadline
        if deadline != nil, !wasArmed {
            armed.append(alarm)
        } else if deadline == nil, wasArmed {
            armed.removeAll { $0 === alarm }
        }
        // A cancel needs no wake: the thread finds nothing due at its old deadline and waits on.
        if deadline != nil { pthread_cond_signal(cond) }
        pthread_mutex_unlock(mutex)
    }

    private func serve() {
        pthread_mutex_lock(mutex)
        while true {
            var earliest: SystemAlarm?
            for a in armed where earliest == nil || a.deadline! < earliest!.deadline! { earliest = a }
            guard let next = earliest, let deadline = next.deadline else {
                pthread_cond_wait(cond, mutex)
                continue
            }
            if deadline > SystemClock().now() {
                wait(until: deadline)
                continue
            }
            next.deadline = nil
            armed.removeAll { $0 === next }
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
