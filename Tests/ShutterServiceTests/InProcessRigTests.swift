// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import ShutterStorage
import Synchronization
import XCTest
@testable import ShutterService

/// The rig's promise: the clock does not move while the service's off-clock work is in
/// flight, however long that work takes in real time and however little CPU it uses (a
/// sync that waits for the card uses none: a CPU reading took it for idle).
final class InProcessRigTests: XCTestCase {
    func testTheClockStandsStillWhileASyncTakesRealTime() async throws {
        let clock = ManualClock(start: .milliseconds(1_000_000))
        let slow = Atomic<Bool>(false)
        let seen = Mutex<[(MonotonicTime, MonotonicTime)]>([])
        let card = CardSync { _ in
            guard slow.load(ordering: .sequentiallyConsistent) else { return }
            let before = clock.now()
            usleep(150_000)  // a slow card: 150 ms of real time, no CPU
            seen.withLock { $0.append((before, clock.now())) }
        }
        let r = try await InProcessRig.start(self, clock: clock, cardSync: card)
        slow.store(true, ordering: .sequentiallyConsistent)
        let photo = try await r.photo()
        slow.store(false, ordering: .sequentiallyConsistent)
        XCTAssertTrue(FileManager.default.fileExists(atPath: photo))
        let syncs = seen.withLock { $0 }
        XCTAssertGreaterThanOrEqual(syncs.count, 2, "the photo's file and its folder were synced")
        for (before, after) in syncs {
            XCTAssertEqual(after, before, "the clock moved while a sync was under way")
        }
    }
}
