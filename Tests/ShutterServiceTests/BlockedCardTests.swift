// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterControl
import ShutterStorage
import XCTest

/// A card whose syncs hang (an SD card mid-erase, a dying stick) holds up no one but the
/// work that waits for it: the loop keeps answering `status`, and the button still starts
/// a clip. Every fsync on the card is held 5 s by the test (`CardSync.hold`) while two
/// deletes are under way; on Swift's task pool (2 threads on this machine) they used to
/// stall the loop itself.
final class BlockedCardTests: XCTestCase {
    func testAHungSyncHoldsUpNeitherStatusNorTheButton() async throws {
        let r = try await InProcessRig.start(self)
        _ = try await r.photo()
        _ = try await r.photo()
        let listed = try await r.ask(ControlRequest(cmd: "files"))
        let numbers = try XCTUnwrap(listed.items).map(\.number)
        XCTAssertEqual(numbers.count, 2)

        let until = ContinuousClock.now + .seconds(5)
        let held = HeldSyncs()
        CardSync.hold { _ in
            held.add()
            let left = until - ContinuousClock.now
            if left > .zero { usleep(useconds_t(left.components.seconds * 1_000_000 + left.components.attoseconds / 1_000_000_000_000)) }
        }
        defer { CardSync.hold(nil) }
        // The card hangs in real time: the clock runs on meanwhile, as it would.
        r.clockWaitsForWork = false
        let deletes = numbers.map { r.send(ControlRequest(cmd: "delete", file: String($0))) }
        while held.count == 0 && ContinuousClock.now < until { try await Task.sleep(for: .milliseconds(10)) }
        XCTAssertGreaterThan(held.count, 0, "a delete reached the card's sync")

        // While the sync hangs: status, many times, timed on the real clock.
        var times: [Duration] = []
        for _ in 0..<20 {
            let t0 = ContinuousClock.now
            _ = await r.status()
            times.append(ContinuousClock.now - t0)
        }
        // The button: a press held past holdMs records.
        let pressed = try await r.ask(ControlRequest(cmd: "press"))
        XCTAssertTrue(pressed.ok)
        try await r.advance(until: "recording") { await r.status().state == "recording" }
        let stillHeld = ContinuousClock.now < until
        let worst = times.max()!, median = times.sorted()[times.count / 2]
        print("blocked card: status answered in \(median) (median), \(worst) (worst) of 20 while a sync hung 5 s; "
              + "the press recorded \(stillHeld ? "while it still hung" : "after it ended")")
        XCTAssertLessThan(worst, .seconds(1), "status waited for the card")
        XCTAssertTrue(stillHeld, "the press became a recording only after the hung sync ended")
        XCTAssertTrue(deletes.allSatisfy { $0.reply == nil }, "the deletes wait for the card")

        _ = r.send(ControlRequest(cmd: "release"))
        r.clockWaitsForWork = true
        try await r.advance(until: "the deletes answered", limit: .seconds(120)) { deletes.allSatisfy { $0.reply != nil } }
        XCTAssertEqual(deletes.map { $0.reply?.ok }, [true, true], "\(deletes.map { $0.reply as Any })")
    }
}

/// How many syncs the hold has seen.
private final class HeldSyncs: @unchecked Sendable {
    // Unchecked: the lock guards `n`.
    private let lock = NSLock()
    private var n = 0
    func add() { lock.lock(); n += 1; lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return n }
}
