// SPDX-License-Identifier: BSD-2-Clause
import Foundation
@testable import ShutterWeb
import Synchronization
import XCTest

/// The still-image cache on a hand-moved clock: who waits, what the service is asked
/// to encode, and that ten viewers within 200 ms cost one encode.
final class SnapshotCacheTests: XCTestCase {
    /// Runs `take` on its own thread; the result lands in `got`.
    func takeInBackground(_ cache: SnapshotCache, wait: Double = 30, into got: Answers, done: XCTestExpectation) {
        Thread.detachNewThread {
            let jpeg = cache.take(wait: wait)
            got.items.withLock { $0.append(jpeg) }
            done.fulfill()
        }
    }

    /// Ten requests at once: one frame is asked for, and all ten get it; more within
    /// 200 ms of it get it from the cache; later, a new one is asked for.
    func testTenViewersWithin200msCostOneEncode() throws {
        let clock = TestClock(50)
        let cache = SnapshotCache(now: { [clock] in clock.now })
        XCTAssertFalse(cache.wanted, "nobody asked: the service encodes nothing")
        let got = Answers()
        let done = expectation(description: "ten answered")
        done.expectedFulfillmentCount = 10
        for _ in 0..<10 { takeInBackground(cache, into: got, done: done) }
        // The service's side: it encodes while a snapshot is wanted (PreviewFrames.offer).
        var encodes = 0
        let deadline = Date().addingTimeInterval(30)
        while got.items.withLock({ $0.count }) < 10, Date() < deadline {
            if cache.wanted {
                encodes += 1
                cache.publish(jpeg: Data([0xFF, 0xD8, UInt8(encodes)]))
            }
            usleep(1000)
        }
        wait(for: [done], timeout: 30)
        XCTAssertEqual(Set(got.items.withLock { $0 }), [Data([0xFF, 0xD8, UInt8(encodes)])], "all ten got the same frame")
        // The clock stands still: every request came within 200 ms of the frame. One that
        // came before it waited for it; one after it was served from the cache.
        XCTAssertEqual(encodes, 1)
        XCTAssertFalse(cache.wanted, "nobody waits: nothing more to encode")
        let encodesBefore = encodes
        clock.advance(0.19)
        for _ in 0..<10 { XCTAssertEqual(cache.take(wait: 0), Data([0xFF, 0xD8, UInt8(encodesBefore)])) }
        XCTAssertFalse(cache.wanted)
        clock.advance(0.02)
        XCTAssertNil(cache.take(wait: 0), "older than 200 ms: a new frame is needed, none came")
        XCTAssertFalse(cache.wanted, "the one waiting gave up: nothing is encoded for nobody")
    }

    /// Exactly one encode for requests that all arrive before the frame is published.
    func testRequestsWaitingTogetherShareOneFrame() throws {
        let clock = TestClock(0)
        let cache = SnapshotCache(now: { [clock] in clock.now })
        let got = Answers()
        let done = expectation(description: "ten answered")
        done.expectedFulfillmentCount = 10
        for _ in 0..<10 { takeInBackground(cache, into: got, done: done) }
        let deadline = Date().addingTimeInterval(30)
        // Waits until every one is waiting (each marks the cache wanted), then publishes once.
        while Date() < deadline, waitingCount(cache) < 10 { usleep(1000) }
        XCTAssertTrue(cache.wanted)
        cache.publish(jpeg: Data([1, 2, 3]))
        XCTAssertFalse(cache.wanted, "the frame satisfied all of them")
        wait(for: [done], timeout: 30)
        XCTAssertEqual(got.items.withLock { $0 }, Array(repeating: Data([1, 2, 3]), count: 10))
    }

    /// The live preview's frames feed the cache too: with a preview open, a snapshot costs nothing.
    func testPreviewFramesServeSnapshots() {
        let clock = TestClock(0)
        let cache = SnapshotCache(now: { [clock] in clock.now })
        cache.publish(jpeg: Data([9]))
        clock.advance(0.15)
        XCTAssertEqual(cache.take(wait: 0), Data([9]))
        XCTAssertFalse(cache.wanted)
    }

    /// The form an event-driven server uses: nothing blocks, the answer comes by callback.
    func testTakeNeverBlocks() {
        let clock = TestClock(0)
        let cache = SnapshotCache(now: { [clock] in clock.now })
        let got = Answers()
        cache.take(wait: 30) { jpeg in got.items.withLock { $0.append(jpeg) } }
        XCTAssertEqual(got.items.withLock { $0.count }, 0, "no frame yet: it returned without an answer")
        XCTAssertTrue(cache.wanted)
        cache.publish(jpeg: Data([7]))
        XCTAssertEqual(got.items.withLock { $0 }, [Data([7])], "delivered by the publish")
        cache.take(wait: 30) { jpeg in got.items.withLock { $0.append(jpeg) } }
        XCTAssertEqual(got.items.withLock { $0 }, [Data([7]), Data([7])], "fresh: delivered at once")
    }

    func waitingCount(_ cache: SnapshotCache) -> Int { cache.waiting }
}

/// What the background requests got.
final class Answers: Sendable {
    let items = Mutex([Data?]())
}
