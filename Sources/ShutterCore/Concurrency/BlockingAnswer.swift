// SPDX-License-Identifier: BSD-2-Clause
import Dispatch
import Synchronization

/// A thread that may block (a control connection, a web connection: threads of
/// their own, never the task pool) waiting for an answer that another thread
/// gives (the service loop): the one bridge between the two. The first answer
/// counts; later ones are dropped.
public final class BlockingAnswer<Value: Sendable>: Sendable {
    private let box = Mutex<Value?>(nil)
    private let done = DispatchSemaphore(value: 0)

    public init() {}

    public func give(_ value: Value) {
        let first = box.withLock { v -> Bool in
            guard v == nil else { return false }
            v = value
            return true
        }
        if first { done.signal() }
    }

    /// Blocks the calling thread until the answer comes, or `timeout` seconds pass (nil).
    public func wait(timeout seconds: Double? = nil) -> Value? {
        if let seconds {
            guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        } else {
            done.wait()
        }
        return box.withLock { $0 }
    }
}
