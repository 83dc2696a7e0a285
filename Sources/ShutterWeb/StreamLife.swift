// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import Synchronization

/// What every streamed body (the preview, live events) shares: it is open until
/// closed, once; the server's waker for its parked connection; the app's handler
/// for its close. Closing runs both: the app forgets the stream, and the parked
/// connection reads once more, sees the end and closes.
final class StreamLife: Sendable {
    private struct State {
        var open = true
        var wake: (@Sendable () -> Void)?
        var onClose: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())

    var isOpen: Bool { state.withLock { $0.open } }

    func setWaker(_ wake: @escaping @Sendable () -> Void) {
        state.withLock { $0.wake = wake }
    }

    /// There is more to send (called outside the stream's own lock).
    func ring() {
        let wake = state.withLock { $0.wake }
        wake?()
    }

    /// Runs `handler` once when the stream closes; at once if it already has (the
    /// server may stop, or the client go, before the app has registered it).
    func whenClosed(_ handler: @escaping @Sendable () -> Void) {
        let closed = state.withLock { s -> Bool in
            guard s.open else { return true }
            s.onClose = handler
            return false
        }
        if closed { handler() }
    }

    /// Closes; false when it already was. `cleanup` runs before the handlers.
    @discardableResult
    func close(_ cleanup: () -> Void = {}) -> Bool {
        let (was, handler, wake) = state.withLock { s in
            let taken = (s.open, s.onClose, s.wake)
            s.open = false
            s.onClose = nil
            s.wake = nil
            return taken
        }
        guard was else { return false }
        cleanup()
        handler?()
        wake?()
        return true
    }
}

extension Data {
    /// Moves up to `buffer.count` bytes from the front of this into `buffer`; how many.
    mutating func drain(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let n = Swift.min(buffer.count, count)
        copyBytes(to: buffer.bindMemory(to: UInt8.self), from: startIndex..<(startIndex + n))
        removeFirst(n)
        return n
    }
}
