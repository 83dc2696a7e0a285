// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex with NSLock's lock()/unlock(): full Foundation's NSLock without
/// Foundation (FoundationEssentials has none), so the service's modules carry no ICU.
/// For state a class guards with explicit lock and unlock calls; new code uses Mutex.
// Unchecked: owns the raw memory of a pthread mutex, which is made to be used from any thread.
public final class PlainLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }
}

/// A pthread condition variable and its mutex with NSCondition's calls (lock, unlock,
/// wait, signal, broadcast; `wait(seconds:)` for `wait(until: Date() + seconds)`), as
/// NSCondition does it: the deadline is the wall clock's (pthread_cond_timedwait on
/// CLOCK_REALTIME).
// Unchecked: owns the raw memory of a pthread mutex and condition, made to be used from any thread.
public final class PlainCondition: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        cond = .allocate(capacity: 1)
        cond.initialize(to: pthread_cond_t())
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        cond.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }
    /// Waits for a signal or broadcast (or a spurious wake-up: callers loop on their condition).
    public func wait() { pthread_cond_wait(cond, mutex) }
    public func signal() { pthread_cond_signal(cond) }
    public func broadcast() { pthread_cond_broadcast(cond) }

    /// Waits until signalled or `seconds` pass; false when they passed.
    public func wait(seconds: Double) -> Bool {
        guard seconds.isFinite, seconds < 1e9 else { wait(); return true }
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let ns = Int(ts.tv_nsec) + Int((max(0, seconds) * 1e9).rounded())
        ts.tv_sec += ns / 1_000_000_000
        ts.tv_nsec = ns % 1_000_000_000
        return pthread_cond_timedwait(cond, mutex, &ts) != ETIMEDOUT
    }
}
