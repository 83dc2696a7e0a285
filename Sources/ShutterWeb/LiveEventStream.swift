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

/// One watcher of `/api/events`: Server-Sent Events (`event:` + `data:` lines),
/// the current state first, then each event as the service publishes it. `read`
/// never waits: an event appends to `pending` and wakes the parked connection. A
/// comment line every 15 s keeps proxies and the browser from closing it; a client
/// that reads nothing while 256 KiB pile up is let go (it reconnects and starts
/// again from the current state).
final class LiveEventStream: WebStream, @unchecked Sendable {
    static let keepAliveSeconds = 15.0
    static let maxPending = 256 * 1024

    let life = StreamLife()
    private let events: LiveEvents
    private let render: @Sendable (LiveEvent) -> JSONObject?
    // Unchecked: `lock` guards the vars.
    private let lock = PlainLock()
    private var pending = Data("retry: 2000\n\n".utf8)
    private var overflowed = false
    private var lastWrite = Date()
    private var watchID: Int?

    /// `render`: the event's data as this client may see it (nil: not sent).
    init(events: LiveEvents, render: @escaping @Sendable (LiveEvent) -> JSONObject?) {
        self.events = events
        self.render = render
        let id = events.watch { [weak self] in self?.take($0) }
        lock.lock()
        watchID = id
        lock.unlock()
        if !life.isOpen { events.stopWatching(id) }
    }

    private func take(_ event: LiveEvent) {
        guard life.isOpen, let data = render(event) else { return }
        let text = "event: \(event.type)\ndata: \(JSONValue.object(data).rendered(pretty: false))\n\n"
        lock.lock()
        pending.append(contentsOf: Array(text.utf8))
        if pending.count > Self.maxPending { overflowed = true }
        lock.unlock()
        life.ring()
    }

    func whenReady(_ wake: @escaping @Sendable () -> Void) { life.setWaker(wake) }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard life.isOpen else { return nil }
        lock.lock()
        defer { lock.unlock() }
        guard !overflowed else { return nil }
        if pending.isEmpty {
            // The server asks once a second.
            guard Date().timeIntervalSince(lastWrite) >= Self.keepAliveSeconds else { return 0 }
            pending = Data(": keep-alive\n\n".utf8)
        }
        lastWrite = Date()
        return pending.drain(into: buffer)
    }

    func close() {
        life.close {
            lock.lock()
            let id = watchID
            lock.unlock()
            if let id { events.stopWatching(id) }
        }
    }
}
