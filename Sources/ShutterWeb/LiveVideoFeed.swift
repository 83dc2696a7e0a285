// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ShutterCore
import Synchronization

/// The page's live H.264 (`/api/live.mp4`): each open response is a viewer that the
/// service feeds a fragmented MP4 of the encoder's own packets (init segment, then a
/// fragment per frame). At most `maxViewers` at once. A viewer that does not take its
/// bytes loses frames (`push` answers false: skip to the next keyframe), and one that
/// takes nothing for `stallSeconds` is closed with what it held.
public final class LiveVideoFeed: Sendable {
    public let maxViewers: Int
    let stallSeconds: Double
    private let viewers = Mutex([ObjectIdentifier: LiveVideoViewer]())

    public init(maxViewers: Int, stallSeconds: Double = 10) {
        self.maxViewers = maxViewers
        self.stallSeconds = stallSeconds
    }

    /// The open viewers, for the service to feed.
    public var open: [LiveVideoViewer] { viewers.withLock { Array($0.values) } }
    public var watched: Bool { viewers.withLock { !$0.isEmpty } }

    /// A new viewer; nil when `maxViewers` are open.
    func join() -> LiveVideoViewer? {
        let v = LiveVideoViewer(feed: self)
        let ok = viewers.withLock { s -> Bool in
            guard s.count < maxViewers else { return false }
            s[ObjectIdentifier(v)] = v
            return true
        }
        return ok ? v : nil
    }

    func leave(_ v: LiveVideoViewer) { _ = viewers.withLock { $0.removeValue(forKey: ObjectIdentifier(v)) } }
}

/// One `/api/live.mp4` response. The service pushes; the server reads when the socket
/// takes more. `read` never waits: with nothing queued it answers 0 and the server parks
/// the connection until the next push wakes it.
public final class LiveVideoViewer: WebStream, @unchecked Sendable {
    /// What may wait for a slow viewer before its frames are dropped (~2 s at 8 Mbit/s).
    static let queueBytes = 2 << 20
    let life = StreamLife()
    private let feed: LiveVideoFeed
    // Unchecked: `lock` guards the vars.
    private let lock = PlainLock()
    private var pending = Data()
    private var lastRead = Date()
    private var dropped = 0

    init(feed: LiveVideoFeed) { self.feed = feed }

    public var isOpen: Bool { life.isOpen }

    /// Frames not sent because this viewer was behind.
    public var framesDropped: Int { lock.lock(); defer { lock.unlock() }; return dropped }

    /// Queues `bytes`; false when the viewer is behind (nothing queued: the next push
    /// must start a fragment a decoder can begin at) or closed. A viewer that has taken
    /// nothing for `stallSeconds` while bytes wait is closed here.
    @discardableResult
    public func push(_ bytes: Data) -> Bool {
        lock.lock()
        let stalled = !pending.isEmpty && Date().timeIntervalSince(lastRead) > feed.stallSeconds
        let behind = pending.count + bytes.count > Self.queueBytes
        if !stalled && !behind { pending.append(bytes) }
        if behind { dropped += 1 }
        lock.unlock()
        if stalled {
            close()
            return false
        }
        if behind { return false }
        life.ring()
        return true
    }

    /// Drops a frame without queueing it (the service skips to a keyframe).
    public func skip() {
        lock.lock()
        dropped += 1
        lock.unlock()
    }

    public func whenReady(_ wake: @escaping @Sendable () -> Void) { life.setWaker(wake) }

    public func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard life.isOpen else { return nil }
        lock.lock()
        defer { lock.unlock() }
        lastRead = Date()
        return pending.drain(into: buffer)
    }

    public func close() {
        life.close {
            lock.lock()
            pending = Data()
            lock.unlock()
            feed.leave(self)
        }
    }
}
