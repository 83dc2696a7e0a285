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

/// One watcher of `/api/events`: Server-Sent Events (`event:` + `data:` lines),
/// the current state first, then each event as the service publishes it. `read`
/// never waits: an event appends to `pending` and wakes the parked connection. A
/// comment line every 15 s keeps proxies and the browser from closing it; a client
/// that reads nothing while 256 KiB pile up is let go (it reconnects and starts
/// again from the current state).
final class LiveEventStream: WebStream, Sendable {
    static let keepAliveSeconds = 15.0
    static let maxPending = 256 * 1024

    let life = StreamLife()
    private let events: LiveEvents
    private let render: @Sendable (LiveEvent) -> JSONObject?
    private struct State {
        var pending = Data("retry: 2000\n\n".utf8)
        var overflowed = false
        var lastWrite = Date()
        var watchID: Int?
    }
    private let state = Mutex(State())

    /// `render`: the event's data as this client may see it (nil: not sent).
    init(events: LiveEvents, render: @escaping @Sendable (LiveEvent) -> JSONObject?) {
        self.events = events
        self.render = render
        let id = events.watch { [weak self] in self?.take($0) }
        state.withLock { $0.watchID = id }
        if !life.isOpen { events.stopWatching(id) }
    }

    private func take(_ event: LiveEvent) {
        guard life.isOpen, let data = render(event) else { return }
        let text = "event: \(event.type)\ndata: \(JSONValue.object(data).rendered(pretty: false))\n\n"
        state.withLock { s in
            s.pending.append(contentsOf: Array(text.utf8))
            if s.pending.count > Self.maxPending { s.overflowed = true }
        }
        life.ring()
    }

    func whenReady(_ wake: @escaping @Sendable () -> Void) { life.setWaker(wake) }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard life.isOpen else { return nil }
        return state.withLock { s -> Int? in
            guard !s.overflowed else { return nil }
            if s.pending.isEmpty {
                // The server asks once a second.
                guard Date().timeIntervalSince(s.lastWrite) >= Self.keepAliveSeconds else { return 0 }
                s.pending = Data(": keep-alive\n\n".utf8)
            }
            s.lastWrite = Date()
            return s.pending.drain(into: buffer)
        }
    }

    func close() {
        life.close {
            if let id = state.withLock({ $0.watchID }) { events.stopWatching(id) }
        }
    }
}
