// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import Synchronization

/// A value that arrives later, awaited by any number of tasks (an autofocus
/// cycle started at the press, awaited by the photo of the tap).
///
/// A waiter's `WorkToken` is given back while it waits (the value may need the clock:
/// a frame still to come) and taken again by `set`, before the waiter runs on.
final class Eventually<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [(CheckedContinuation<Value, Never>, WorkToken?)] = []
    }

    private let state = Mutex(State())

    init() {}

    func set(_ value: Value) {
        let waiters: [(CheckedContinuation<Value, Never>, WorkToken?)] = state.withLock { s in
            guard s.value == nil else { return [] }
            s.value = value
            defer { s.waiters.removeAll() }
            return s.waiters
        }
        for (w, token) in waiters {
            token?.retake()
            w.resume(returning: value)
        }
    }

    var value: Value {
        get async {
            await withCheckedContinuation { (c: CheckedContinuation<Value, Never>) in
                let now: Value? = state.withLock { s in
                    if let v = s.value { return v }
                    s.waiters.append((c, WorkToken.releaseCurrent()))
                    return nil
                }
                if let now { c.resume(returning: now) }
            }
        }
    }
}
