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
public final class LiveVideoViewer: WebStream, Sendable {
    /// What may wait for a slow viewer before its frames are dropped (~2 s at 8 Mbit/s).
    static let queueBytes = 2 << 20
    let life = StreamLife()
    private let feed: LiveVideoFeed
    private struct State {
        var pending = Data()
        var lastRead = Date()
        var dropped = 0
    }
    private let state = Mutex(State())

    init(feed: LiveVideoFeed) { self.feed = feed }

    public var isOpen: Bool { life.isOpen }

    /// Frames not sent because this viewer was behind.
    public var framesDropped: Int { state.withLock { $0.dropped } }

    /// Queues `bytes`; false when the viewer is behind (nothing queued: the next push
    /// must start a fragment a decoder can begin at) or closed. A viewer that has taken
    /// nothing for `stallSeconds` while bytes wait is closed here.
    @discardableResult
    public func push(_ bytes: Data) -> Bool {
        let (stalled, behind) = state.withLock { s -> (Bool, Bool) in
            let stalled = !s.pending.isEmpty && Date().timeIntervalSince(s.lastRead) > feed.stallSeconds
            let behind = s.pending.count + bytes.count > Self.queueBytes
            if !stalled && !behind { s.pending.append(bytes) }
            if behind { s.dropped += 1 }
            return (stalled, behind)
        }
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
        state.withLock { $0.dropped += 1 }
    }

    public func whenReady(_ wake: @escaping @Sendable () -> Void) { life.setWaker(wake) }

    public func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard life.isOpen else { return nil }
        return state.withLock { s in
            s.lastRead = Date()
            return s.pending.drain(into: buffer)
        }
    }

    public func close() {
        life.close {
            state.withLock { $0.pending = Data() }
            feed.leave(self)
        }
    }
}
