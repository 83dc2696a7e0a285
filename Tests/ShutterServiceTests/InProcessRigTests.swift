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
        let r = try await InProcessRig.start(self)
        let clock = r.clock
        let seen = Mutex<[(MonotonicTime, MonotonicTime)]>([])
        CardSync.hold { _ in
            let before = clock.now()
            usleep(150_000)  // a slow card: 150 ms of real time, no CPU
            seen.withLock { $0.append((before, clock.now())) }
        }
        defer { CardSync.hold(nil) }
        let photo = try await r.photo()
        CardSync.hold(nil)
        XCTAssertTrue(FileManager.default.fileExists(atPath: photo))
        let syncs = seen.withLock { $0 }
        XCTAssertGreaterThanOrEqual(syncs.count, 2, "the photo's file and its folder were synced")
        for (before, after) in syncs {
            XCTAssertEqual(after, before, "the clock moved while a sync was under way")
        }
    }
}
