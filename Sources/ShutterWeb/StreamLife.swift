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

/// What every streamed body (the preview, live events) shares: it is open until
/// closed, once; the server's waker for its parked connection; the app's handler
/// for its close. Closing runs both: the app forgets the stream, and the parked
/// connection reads once more, sees the end and closes.
final class StreamLife: @unchecked Sendable {
    // Unchecked: `lock` guards every var.
    private let lock = PlainLock()
    private var open = true
    private var wake: (@Sendable () -> Void)?
    private var onClose: (@Sendable () -> Void)?

    var isOpen: Bool { lock.lock(); defer { lock.unlock() }; return open }

    func setWaker(_ wake: @escaping @Sendable () -> Void) {
        lock.lock()
        self.wake = wake
        lock.unlock()
    }

    /// There is more to send (called outside the stream's own lock).
    func ring() {
        lock.lock()
        let wake = self.wake
        lock.unlock()
        wake?()
    }

    /// Runs `handler` once when the stream closes; at once if it already has (the
    /// server may stop, or the client go, before the app has registered it).
    func whenClosed(_ handler: @escaping @Sendable () -> Void) {
        lock.lock()
        guard open else { lock.unlock(); handler(); return }
        onClose = handler
        lock.unlock()
    }

    /// Closes; false when it already was. `cleanup` runs before the handlers.
    @discardableResult
    func close(_ cleanup: () -> Void = {}) -> Bool {
        lock.lock()
        let was = open
        open = false
        let handler = onClose, wake = self.wake
        onClose = nil
        self.wake = nil
        lock.unlock()
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
