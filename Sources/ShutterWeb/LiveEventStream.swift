import Foundation
import ShutterCore

/// One watcher of `/api/events`: Server-Sent Events (`event:` + `data:` lines),
/// the current state first, then each event as the service publishes it. `read`
/// never waits: an event appends to `pending` and wakes the parked connection. A
/// comment line every 15 s keeps proxies and the browser from closing it; a client
/// that reads nothing while 256 KiB pile up is let go (it reconnects and starts
/// again from the current state).
final class LiveEventStream: WebStream, @unchecked Sendable {
    static let keepAliveSeconds = 15.0
    static let maxPending = 256 * 1024

    // Unchecked: `lock` guards every var.
    private let lock = NSLock()
    private let events: LiveEvents
    private let render: @Sendable (LiveEvent) -> JSONObject?
    private var pending = Data("retry: 2000\n\n".utf8)
    private var isOpen = true
    private var overflowed = false
    private var lastWrite = Date()
    private var watchID: Int?
    private var wake: (@Sendable () -> Void)?
    private var onClose: (@Sendable () -> Void)?

    /// `render`: the event's data as this client may see it (nil: not sent).
    init(events: LiveEvents, render: @escaping @Sendable (LiveEvent) -> JSONObject?) {
        self.events = events
        self.render = render
        let id = events.watch { [weak self] in self?.take($0) }
        lock.lock()
        watchID = id
        let open = isOpen
        lock.unlock()
        if !open { events.stopWatching(id) }
    }

    private func take(_ event: LiveEvent) {
        guard let data = render(event) else { return }
        let text = "event: \(event.type)\ndata: \(JSONValue.object(data).rendered(pretty: false))\n\n"
        lock.lock()
        guard isOpen else { lock.unlock(); return }
        pending.append(contentsOf: Array(text.utf8))
        if pending.count > Self.maxPending { overflowed = true }
        let wake = self.wake
        lock.unlock()
        wake?()
    }

    func whenReady(_ wake: @escaping @Sendable () -> Void) {
        lock.lock()
        self.wake = wake
        lock.unlock()
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard isOpen, !overflowed else { return nil }
        if pending.isEmpty {
            // The server asks once a second.
            guard Date().timeIntervalSince(lastWrite) >= Self.keepAliveSeconds else { return 0 }
            pending = Data(": keep-alive\n\n".utf8)
        }
        let n = min(buffer.count, pending.count)
        pending.copyBytes(to: buffer.bindMemory(to: UInt8.self), from: pending.startIndex..<(pending.startIndex + n))
        pending.removeFirst(n)
        lastWrite = Date()
        return n
    }

    /// Runs `handler` once when the stream closes; at once if it already has.
    func whenClosed(_ handler: @escaping @Sendable () -> Void) {
        lock.lock()
        guard isOpen else { lock.unlock(); handler(); return }
        onClose = handler
        lock.unlock()
    }

    func close() {
        lock.lock()
        let was = isOpen
        isOpen = false
        let id = watchID
        let wake = self.wake, handler = onClose
        self.wake = nil
        onClose = nil
        lock.unlock()
        guard was else { return }
        if let id { events.stopWatching(id) }
        handler?()
        wake?()
    }
}
