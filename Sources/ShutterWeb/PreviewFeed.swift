import Foundation
import Synchronization

/// The live preview's frames for the web page: the service publishes a JPEG
/// when someone watches (`watched`), each open MJPEG response waits for the next
/// one. At most `maxViewers` at a time (each holds a connection).
public final class PreviewFeed: Sendable {
    public static let maxViewers = 4

    private struct State {
        var frame: Data?
        var sequence = 0
        var viewers = 0
        var closed = false
    }
    private let state = Mutex(State())
    private let changed = NSCondition()

    public init() {}

    /// The still-image URL's cache: the service publishes to it too, and encodes a
    /// frame when a snapshot waits for one (SnapshotCache.swift).
    public let snapshots = SnapshotCache()

    /// True while at least one preview is open: only then is anything encoded.
    public var watched: Bool { state.withLock { $0.viewers > 0 } }

    public func publish(jpeg: Data) {
        changed.lock()
        state.withLock { $0.frame = jpeg; $0.sequence += 1 }
        changed.broadcast()
        changed.unlock()
    }

    /// A new viewer's stream; nil when `maxViewers` are open.
    func open() -> MJPEGStream? {
        let ok = state.withLock { s -> Bool in
            guard s.viewers < Self.maxViewers, !s.closed else { return false }
            s.viewers += 1
            return true
        }
        return ok ? MJPEGStream(feed: self) : nil
    }

    func leave() { state.withLock { $0.viewers -= 1 } }

    /// Blocks until a frame newer than `after` (nil when the feed or stream closed, or 10 s passed).
    func next(after: Int, while open: () -> Bool) -> (Data, Int)? {
        changed.lock()
        defer { changed.unlock() }
        let deadline = Date().addingTimeInterval(10)
        while open() {
            let (frame, seq, closed) = state.withLock { ($0.frame, $0.sequence, $0.closed) }
            if closed { return nil }
            if seq > after, let frame { return (frame, seq) }
            if !changed.wait(until: min(deadline, Date().addingTimeInterval(0.5))) && Date() >= deadline { return nil }
        }
        return nil
    }

    func wake() {
        changed.lock()
        changed.broadcast()
        changed.unlock()
    }
}

/// One viewer: `multipart/x-mixed-replace`, a JPEG part per published frame.
/// Its `read` blocks on the feed (a thread per connection, as Motion does).
final class MJPEGStream: WebStream, @unchecked Sendable {
    static let boundary = "ShutterPreviewFrame"
    // Unchecked: `lock` guards `pending`, `sequence`, `isOpen` and `onClose`.
    private let lock = NSLock()
    private let feed: PreviewFeed
    private var pending = Data()
    private var sequence = 0
    private var isOpen = true
    private var onClose: (@Sendable () -> Void)?

    init(feed: PreviewFeed) { self.feed = feed }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        lock.lock()
        var empty = pending.isEmpty
        let seq = sequence
        lock.unlock()
        if empty {
            guard let (jpeg, next) = feed.next(after: seq, while: { self.stillOpen }) else { return nil }
            var part = Data("--\(Self.boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(jpeg.count)\r\n\r\n".utf8)
            part.append(jpeg)
            part.append(contentsOf: Array("\r\n".utf8))
            lock.lock()
            pending = part
            sequence = next
            lock.unlock()
        }
        lock.lock()
        defer { lock.unlock() }
        empty = pending.isEmpty
        if empty { return 0 }
        let n = min(buffer.count, pending.count)
        pending.copyBytes(to: buffer.bindMemory(to: UInt8.self), from: pending.startIndex..<(pending.startIndex + n))
        pending.removeFirst(n)
        return n
    }

    private var stillOpen: Bool { lock.lock(); defer { lock.unlock() }; return isOpen }

    /// Runs `handler` once when the stream closes; at once if it already has (the
    /// server may stop, or the client go, before the app has registered it).
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
        let handler = onClose
        onClose = nil
        lock.unlock()
        guard was else { return }
        feed.leave()
        feed.wake()
        handler?()
    }
}
