// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterControl
import ShutterStorage
import XCTest
@testable import ShutterService

/// A card whose syncs hang (an SD card mid-erase, a dying stick) holds up no one but the
/// work that waits for it: the loop keeps answering `status`, and the button still starts
/// a clip. Every fsync on the card is held by the test (the service's storage syncs through
/// the rig's `CardSync`, which the test arms) until it opens the gate, while two deletes are
/// under way; on Swift's task pool (2 threads on this machine) they used to stall the loop
/// itself. The verdict is the order of things, not their speed: status answered and the
/// press recording while every held sync is still held.
final class BlockedCardTests: XCTestCase {
    func testAHungSyncHoldsUpNeitherStatusNorTheButton() async throws {
        let held = HeldSyncs()
        defer { held.open() }
        let r = try await InProcessRig.start(self, cardSync: held.cardSync)
        _ = try await r.photo()
        _ = try await r.photo()
        let listed = try await r.ask(ControlRequest(cmd: "files"))
        let numbers = try XCTUnwrap(listed.items).map(\.number)
        XCTAssertEqual(numbers.count, 2)

        held.arm()
        // The card hangs in real time: the clock runs on meanwhile, as it would.
        r.clockWaitsForWork = false
        let deletes = numbers.map { r.send(ControlRequest(cmd: "delete", file: String($0))) }
        let bound = ContinuousClock.now + .seconds(60)
        while held.count == 0 && ContinuousClock.now < bound { try await Task.sleep(for: .milliseconds(10)) }
        XCTAssertGreaterThan(held.count, 0, "a delete reached the card's sync")

        // While the sync hangs: status, many times (timed on the real clock for the figure only).
        var times: [Duration] = []
        for _ in 0..<20 {
            let t0 = ContinuousClock.now
            _ = await r.status()
            times.append(ContinuousClock.now - t0)
        }
        let statusWhileHeld = !held.anyLetGo
        // The button: a press held past holdMs records.
        let pressed = try await r.ask(ControlRequest(cmd: "press"))
        XCTAssertTrue(pressed.ok)
        try await r.advance(until: "recording") { await r.status().state == "recording" }
        let recordedWhileHeld = !held.anyLetGo
        let worst = times.max()!, median = times.sorted()[times.count / 2]
        print("blocked card: status answered in \(median) (median), \(worst) (worst) of 20 while \(held.count) sync(s) hung; "
              + "the press recorded \(recordedWhileHeld ? "while they still hung" : "only after the hold's bound let them go")")
        XCTAssertTrue(statusWhileHeld, "status waited for the card: answered only once the hold's 60 s bound let a sync go")
        XCTAssertTrue(recordedWhileHeld, "the press became a recording only after the hold's bound let a sync go")
        XCTAssertTrue(deletes.allSatisfy { $0.reply == nil }, "the deletes wait for the card")

        held.open()
        _ = r.send(ControlRequest(cmd: "release"))
        r.clockWaitsForWork = true
        try await r.advance(until: "the deletes answered", limit: .seconds(120)) { deletes.allSatisfy { $0.reply != nil } }
        XCTAssertEqual(deletes.map { $0.reply?.ok }, [true, true], "\(deletes.map { $0.reply as Any })")
    }

    /// A stop while a delete's card sync hangs: past the stop's bound (25 s of the clock) the
    /// service hands the exit to its hook (`ServiceHooks.exitWithoutWaiting`, the daemon's
    /// exits at once) with the stop's code, while the sync still hangs; this test's hook
    /// returns, so the service then waits for the work and ends once the card lets go.
    func testAStopPastItsBoundWithAHungSyncIsHandedToTheExitHook() async throws {
        let held = HeldSyncs()
        defer { held.open() }
        let r = try await InProcessRig.start(self, cardSync: held.cardSync)
        _ = try await r.photo()
        let listed = try await r.ask(ControlRequest(cmd: "files"))
        let number = try XCTUnwrap(listed.items?.first?.number)
        held.arm()
        _ = r.send(ControlRequest(cmd: "delete", file: String(number)))
        let bound = ContinuousClock.now + .seconds(60)
        while held.count == 0 && ContinuousClock.now < bound { try await Task.sleep(for: .milliseconds(10)) }
        XCTAssertGreaterThan(held.count, 0, "the delete reached the card's sync")

        // The card hangs in real time: the clock runs on to the stop's bound meanwhile.
        r.clockWaitsForWork = false
        r.service.stop()
        try await r.advance(until: "the exit handed to the hook") { !r.told.lines(containing: "EXIT WITHOUT WAITING").isEmpty }
        XCTAssertEqual(r.told.lines(containing: "EXIT WITHOUT WAITING").map(\.1), ["EXIT WITHOUT WAITING 0"], "once, with the stop's code")
        XCTAssertFalse(held.anyLetGo, "handed over while the sync still hung")
        XCTAssertTrue(r.log.text.contains("job(s) still running after \(ServiceLoop.stopBound) s; exiting without them"), r.log.text)

        held.open()
        let code = try await r.exitCode()
        XCTAssertEqual(code, 0, "then, the hook having returned, the service ends once the work is done")
    }
}

/// The card's syncs, once `arm`ed held until `open` (60 s at most each: a bound on the wait,
/// recorded when it is what let a sync go). The lock guards the counts and the gate.
private final class HeldSyncs: @unchecked Sendable {
    private let lock = NSCondition()
    private var armed = false
    private var n = 0
    private var isOpen = false
    private var letGo = 0

    /// What the service's storage syncs through: each sync goes by `hold`.
    var cardSync: CardSync { CardSync(hold: { _ in self.hold() }) }

    /// From now on each sync is held (until then they pass).
    func arm() { lock.lock(); armed = true; lock.unlock() }

    /// On the syncing thread: once armed, counts the sync and waits for the gate.
    private func hold() {
        lock.lock(); defer { lock.unlock() }
        guard armed else { return }
        n += 1
        let bound = Date().addingTimeInterval(60)
        while !isOpen {
            if !lock.wait(until: bound) {
                letGo += 1
                return
            }
        }
    }

    func open() { lock.lock(); isOpen = true; lock.broadcast(); lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return n }
    /// True once the bound, not the test, let a held sync go.
    var anyLetGo: Bool { lock.lock(); defer { lock.unlock() }; return letGo > 0 }
}
