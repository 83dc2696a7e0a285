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

/// The live preview's frames for the web page: the service publishes a JPEG
/// when someone watches (`watched`); each open MJPEG response is woken to send
/// it. At most `maxViewers` at a time (each holds a connection).
public final class PreviewFeed: Sendable {
    public static let maxViewers = 4
    /// A viewer with no new frame for this long is ended (the camera stopped).
    static let staleSeconds = 10.0

    private struct State {
        var frame: Data?
        var sequence = 0
        var viewers: [ObjectIdentifier: @Sendable () -> Void] = [:]
    }
    private let state = Mutex(State())

    public init() {}

    /// The still-image URL's cache: the service publishes to it too, and encodes a
    /// frame when a snapshot waits for one (SnapshotCache.swift).
    public let snapshots = SnapshotCache()

    /// True while at least one preview is open: only then is anything encoded.
    public var watched: Bool { state.withLock { !$0.viewers.isEmpty } }

    public func publish(jpeg: Data) {
        let wakers = state.withLock { s -> [@Sendable () -> Void] in
            s.frame = jpeg
            s.sequence += 1
            return Array(s.viewers.values)
        }
        wakers.forEach { $0() }
    }

    /// A new viewer's stream; nil when `maxViewers` are open.
    func open() -> MJPEGStream? {
        let stream = MJPEGStream(feed: self)
        let ok = state.withLock { s -> Bool in
            guard s.viewers.count < Self.maxViewers else { return false }
            s.viewers[ObjectIdentifier(stream)] = {}
            return true
        }
        return ok ? stream : nil
    }

    func setWaker(for stream: MJPEGStream, _ wake: @escaping @Sendable () -> Void) {
        state.withLock { s in
            if s.viewers[ObjectIdentifier(stream)] != nil { s.viewers[ObjectIdentifier(stream)] = wake }
        }
    }

    func leave(_ stream: MJPEGStream) { _ = state.withLock { $0.viewers.removeValue(forKey: ObjectIdentifier(stream)) } }

    /// The newest frame if it is newer than `after`; never waits.
    func frame(after: Int) -> (Data, Int)? {
        state.withLock { s in
            guard s.sequence > after, let frame = s.frame else { return nil }
            return (frame, s.sequence)
        }
    }
}

/// One viewer: `multipart/x-mixed-replace`, a JPEG part per published frame.
/// `read` never waits: with no new frame it answers 0 and the server parks the
/// connection until the feed's next frame wakes it (as Motion's MJPEG, without a
/// thread per viewer).
final class MJPEGStream: WebStream, Sendable {
    static let boundary = "ShutterPreviewFrame"
    let life = StreamLife()
    private let feed: PreviewFeed
    private struct State {
        var pending = Data()
        var sequence = 0
        var lastFrame = Date()
    }
    private let state = Mutex(State())

    init(feed: PreviewFeed) { self.feed = feed }

    func whenReady(_ wake: @escaping @Sendable () -> Void) {
        life.setWaker(wake)
        feed.setWaker(for: self, wake)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard life.isOpen else { return nil }
        return state.withLock { s -> Int? in
            if s.pending.isEmpty {
                guard let (jpeg, next) = feed.frame(after: s.sequence) else {
                    // The server asks once a second: a feed that stopped ends the stream.
                    return Date().timeIntervalSince(s.lastFrame) > PreviewFeed.staleSeconds ? nil : 0
                }
                s.pending = Data("--\(Self.boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(jpeg.count)\r\n\r\n".utf8)
                s.pending.append(jpeg)
                s.pending.append(contentsOf: Array("\r\n".utf8))
                s.sequence = next
                s.lastFrame = Date()
            }
            return s.pending.drain(into: buffer)
        }
    }

    func close() { life.close { feed.leave(self) } }
}
