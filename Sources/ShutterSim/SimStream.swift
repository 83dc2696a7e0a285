// SPDX-License-Identifier: BSD-2-Clause
import Synchronization

/// The simulated devices' output: a bounded stream that keeps the newest `depth`
/// elements when its consumer is slow (as `AsyncStream`'s `.bufferingNewest`),
/// and knows whether the consumer has taken everything and is waiting for more,
/// so a test on a `ManualClock` can wait until the consumer has caught up.
///
/// Consumer side: an `AsyncStream` (the role protocols return one). When the
/// consumer drops it, or its task is cancelled, the stream is terminated and
/// `send` says so.
final class SimStream<Element: Sendable>: Sendable {
    enum Sent: Equatable {
        /// Handed to the waiting consumer or buffered.
        case enqueued
        /// Buffered; the oldest buffered element was dropped to make room.
        case droppedOldest
        /// Finished, or the consumer is gone: the element was not kept.
        case terminated
    }

    private enum Step { case give(CheckedContinuation<Element?, Never>), kept(Element?), refused }
    private enum Now { case element(Element), end, wait }

    private struct State {
        var buffer: [Element] = []
        var waiter: CheckedContinuation<Element?, Never>?
        /// No more elements: the buffered ones, then the end.
        var finished = false
        /// The consumer is gone (dropped the stream or was cancelled).
        var terminated = false
    }

    private let depth: Int
    private let onChange: @Sendable () -> Void
    private let state = Mutex(State())

    init(depth: Int, onChange: @escaping @Sendable () -> Void = {}) {
        self.depth = max(1, depth)
        self.onChange = onChange
    }

    /// The consumer's stream. Make one per `SimStream`.
    func makeStream() -> AsyncStream<Element> {
        // Released with the AsyncStream's storage (consumer dropped it, or cancelled).
        let token = ConsumerToken(onGone: { [self] in terminate() })
        return AsyncStream(unfolding: { [self] in
            withExtendedLifetime(token) {}
            return await next()
        })
    }

    /// Producer side. Returns the element dropped to make room, if any, so the
    /// caller can release it outside its own locks.
    func send(_ element: Element) -> (Sent, dropped: Element?) {
        let step: Step = state.withLock { s in
            if s.finished || s.terminated { return .refused }
            if let w = s.waiter {
                s.waiter = nil
                return .give(w)
            }
            s.buffer.append(element)
            return .kept(s.buffer.count > depth ? s.buffer.removeFirst() : nil)
        }
        switch step {
        case .refused:
            return (.terminated, nil)
        case .give(let w):
            w.resume(returning: element)
            onChange()
            return (.enqueued, nil)
        case .kept(let dropped):
            onChange()
            return (dropped == nil ? .enqueued : .droppedOldest, dropped)
        }
    }

    /// Ends the stream after the buffered elements.
    func finish() {
        let w: CheckedContinuation<Element?, Never>? = state.withLock { s in
            s.finished = true
            defer { s.waiter = nil }
            return s.waiter
        }
        w?.resume(returning: nil)
        onChange()
    }

    /// True when the consumer has taken every element and waits for the next,
    /// or the stream is over.
    var consumerCaughtUp: Bool {
        state.withLock { s in s.terminated || (s.buffer.isEmpty && (s.finished || s.waiter != nil)) }
    }

    private func terminate() {
        let (w, dropped): (CheckedContinuation<Element?, Never>?, [Element]) = state.withLock { s in
            s.terminated = true
            defer {
                s.waiter = nil
                s.buffer = []
            }
            return (s.waiter, s.buffer)
        }
        w?.resume(returning: nil)
        withExtendedLifetime(dropped) {}  // released here, outside the lock
        onChange()
    }

    private func next() async -> Element? {
        if Task.isCancelled {
            terminate()
            return nil
        }
        let element: Element? = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Element?, Never>) in
                let now: Now = state.withLock { s in
                    if !s.buffer.isEmpty { return .element(s.buffer.removeFirst()) }
                    if s.finished || s.terminated { return .end }
                    s.waiter = c
                    return .wait
                }
                switch now {
                case .element(let e): c.resume(returning: e)
                case .end: c.resume(returning: nil)
                case .wait: break
                }
                onChange()  // took one, or now waits for the next
            }
        } onCancel: {
            terminate()
        }
        return element
    }
}

/// Calls `onGone` when released: tells a `SimStream` its consumer dropped the stream.
private final class ConsumerToken: Sendable {
    let onGone: @Sendable () -> Void
    init(onGone: @escaping @Sendable () -> Void) { self.onGone = onGone }
    deinit { onGone() }
}
