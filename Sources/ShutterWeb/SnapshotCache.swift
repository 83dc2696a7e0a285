import Foundation
import Synchronization

/// The still-image URL's picture (`GET /api/snapshot.jpg`, Home Assistant's "still
/// image URL"): the newest preview JPEG the service encoded, reused while it is at
/// most `freshSeconds` old, so ten viewers cost one encode. With no preview watched
/// the service encodes nothing; a snapshot then asks for one frame (`wanted`), which
/// the service encodes from the next video frame at the preview's size and hands back
/// (`publish`), and every request waiting meanwhile gets that same one.
public final class SnapshotCache: Sendable {
    public static let freshSeconds = 0.2
    /// The longest a request waits for a frame (a few video frames and one small encode).
    public static let waitSeconds = 1.0

    private struct State {
        var jpeg: Data?
        var sequence = 0
        var publishedAt = -Double.infinity
        var waiting = 0
        var wanted = false
    }
    private let state = Mutex(State())
    private let changed = NSCondition()
    private let now: @Sendable () -> Double

    public init(now: @escaping @Sendable () -> Double = { ProcessInfo.processInfo.systemUptime }) {
        self.now = now
    }

    /// True while a request waits for a frame: the service encodes the next one.
    public var wanted: Bool { state.withLock { $0.wanted } }
    /// Requests waiting for a frame now (tests).
    var waiting: Int { state.withLock { $0.waiting } }

    /// A preview JPEG the service encoded (for a snapshot, or for the live preview's viewers).
    public func publish(jpeg: Data) {
        let t = now()
        changed.lock()
        state.withLock { s in
            s.jpeg = jpeg
            s.sequence += 1
            s.publishedAt = t
            s.wanted = false
        }
        changed.broadcast()
        changed.unlock()
    }

    /// A JPEG at most `freshSeconds` old: the cached one, else the next one published,
    /// waited for at most `wait` seconds; nil when none came (no camera, no frames).
    public func take(wait: Double = SnapshotCache.waitSeconds) -> Data? {
        let t = now()
        changed.lock()
        defer { changed.unlock() }
        let (fresh, seen) = state.withLock { s -> (Data?, Int) in
            if let jpeg = s.jpeg, t - s.publishedAt <= Self.freshSeconds { return (jpeg, s.sequence) }
            s.wanted = true
            s.waiting += 1
            return (nil, s.sequence)
        }
        if let fresh { return fresh }
        defer {
            state.withLock { s in
                s.waiting -= 1
                // Nobody left to give it to: the service need not encode one.
                if s.waiting == 0 { s.wanted = false }
            }
        }
        let deadline = Date().addingTimeInterval(wait)
        while true {
            if let jpeg = state.withLock({ $0.sequence > seen ? $0.jpeg : nil }) { return jpeg }
            if !changed.wait(until: deadline) { return state.withLock { $0.sequence > seen ? $0.jpeg : nil } }
        }
    }
}
