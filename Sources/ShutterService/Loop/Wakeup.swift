// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import Synchronization

/// Wakes the service's timer loop early when a nearer deadline appears: the
/// loop sleeps until the next known deadline *or* a `notify()`, whichever is
/// first. A notify while nobody waits is kept for the next wait.
final class Wakeup: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func notify() {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { s in
            guard let w = s.waiter else { s.pending = true; return nil }
            s.waiter = nil
            return w
        }
        waiter?.resume()
    }

    /// Returns at `deadline` on `clock`, at a `notify()`, or when cancelled.
    func wait(until deadline: MonotonicTime, on clock: any MonotonicClock) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await clock.sleep(until: deadline) }
            group.addTask { await self.notified() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns at the next `notify()` (or one made since the last wait), or when cancelled.
    func wait() async { await notified() }

    private func notified() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now: Bool = state.withLock { s in
                    if s.pending || Task.isCancelled { s.pending = false; return true }
                    s.waiter = c
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            let waiter: CheckedContinuation<Void, Never>? = state.withLock { s in
                defer { s.waiter = nil }
                return s.waiter
            }
            waiter?.resume()
        }
    }
}
