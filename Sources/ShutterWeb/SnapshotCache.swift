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

    public typealias Delivery = @Sendable (Data?) -> Void

    private struct State {
        var jpeg: Data?
        var publishedAt = -Double.infinity
        var waiters: [Int: Delivery] = [:]
        var nextWaiter = 0
    }
    private let state = Mutex(State())
    private let timeouts = DispatchQueue(label: "shutter.web.snapshot")
    private let now: @Sendable () -> Double

    public init(now: @escaping @Sendable () -> Double = { ProcessInfo.processInfo.systemUptime }) {
        self.now = now
    }

    /// True while a request waits for a frame: the service encodes the next one.
    public var wanted: Bool { state.withLock { !$0.waiters.isEmpty } }
    /// Requests waiting for a frame now (tests).
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// A preview JPEG the service encoded (for a snapshot, or for the live preview's viewers).
    public func publish(jpeg: Data) {
        let t = now()
        let waiters = state.withLock { s -> [Delivery] in
            s.jpeg = jpeg
            s.publishedAt = t
            defer { s.waiters.removeAll() }
            return Array(s.waiters.values)
        }
        waiters.forEach { $0(jpeg) }
    }

    /// Delivers a JPEG at most `freshSeconds` old: the cached one at once, else the next
    /// one published, or nil when none comes within `wait` seconds (no camera, no frames).
    /// It never blocks: `deliver` runs on the caller's thread, the publisher's or a timer's.
    public func take(wait: Double = SnapshotCache.waitSeconds, _ deliver: @escaping Delivery) {
        let t = now()
        let (fresh, id) = state.withLock { s -> (Data?, Int?) in
            if let jpeg = s.jpeg, t - s.publishedAt <= Self.freshSeconds { return (jpeg, nil) }
            let id = s.nextWaiter
            s.nextWaiter += 1
            s.waiters[id] = deliver
            return (nil, id)
        }
        guard let id else { return deliver(fresh) }
        // Given up on: off the list, so nobody is left for whom to encode one.
        timeouts.asyncAfter(deadline: .now() + wait) { [self] in
            state.withLock { $0.waiters.removeValue(forKey: id) }?(nil)
        }
    }

    /// `take` for a thread that may block (at most `wait` seconds).
    public func take(wait: Double = SnapshotCache.waitSeconds) -> Data? {
        let answer = BlockingAnswer<Data?>()
        take(wait: wait) { answer.give($0) }
        return answer.wait().flatMap { $0 }
    }
}
