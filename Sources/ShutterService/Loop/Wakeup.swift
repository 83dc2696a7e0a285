// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import Synchronization

/// Wakes a waiting task (the camera supervisor: after a failed start, and when its
/// stream ends) when another asks (`notify`). A notify while nobody waits is kept for
/// the next wait.
///
/// The waiter's `WorkToken` is given back while it waits and taken again by `notify`
/// (or the cancellation), before the waiter runs on.
final class Wakeup: Sendable {
    private struct State {
        var pending = false
        var waiter: (CheckedContinuation<Void, Never>, WorkToken?)?
    }

    private let state = Mutex(State())

    func notify() {
        let waiter = state.withLock { s -> (CheckedContinuation<Void, Never>, WorkToken?)? in
            guard let w = s.waiter else { s.pending = true; return nil }
            s.waiter = nil
            return w
        }
        Self.wake(waiter)
    }

    /// Returns at the next `notify()` (or one made since the last wait), or when cancelled.
    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now: Bool = state.withLock { s in
                    if s.pending || Task.isCancelled { s.pending = false; return true }
                    s.waiter = (c, WorkToken.releaseCurrent())
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { s -> (CheckedContinuation<Void, Never>, WorkToken?)? in
                defer { s.waiter = nil }
                return s.waiter
            }
            Self.wake(waiter)
        }
    }

    private static func wake(_ waiter: (CheckedContinuation<Void, Never>, WorkToken?)?) {
        guard let (c, token) = waiter else { return }
        token?.retake()
        c.resume()
    }
}
