// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import XCTest
@testable import ShutterService

/// The loop's inbox and its wait: ticks and events in the order the loop needs them.
final class InboxTests: XCTestCase {
    private let request = ServiceEvent.request(.status, .ignored)

    private func isTick(_ e: ServiceEvent?) -> Bool {
        if case .tick? = e { return true }
        return false
    }

    /// A deadline that stays due (the encoder's, while it makes no progress) is ticked once,
    /// then the events waiting go first: it starved them before (a hold under emulation
    /// never got the frames or the finish that would have moved it).
    func testADeadlineThatStaysDueDoesNotStarveTheEvents() async {
        let clock = ManualClock(start: .milliseconds(1_000_000))
        let inbox = Inbox(clock: clock)
        let due = clock.now() - .seconds(1)
        for _ in 0..<3 { inbox.post(request) }
        let first = await inbox.next(until: due)
        XCTAssertTrue(isTick(first), "a deadline newly due is ticked first")
        for i in 0..<3 {
            let e = await inbox.next(until: due)
            XCTAssertFalse(isTick(e), "event \(i) goes before another tick of the same deadline")
        }
        // Nothing left: the stale deadline is ticked again after `retick`, not at once.
        let again = Task { await inbox.next(until: due) }
        try? await Task.sleep(nanoseconds: 50_000_000)
        clock.advance(by: Inbox.retick)
        let e = await again.value
        XCTAssertTrue(isTick(e))
    }

    /// A deadline newly due is ticked before an event queued at the same instant (a frame
    /// stamped at a recording's end must not be handled before its stop).
    func testANewlyDueDeadlineIsTickedBeforeTheEventsWaiting() async {
        let clock = ManualClock(start: .milliseconds(1_000_000))
        let inbox = Inbox(clock: clock)
        let deadline = clock.now() + .milliseconds(100)
        inbox.post(request)
        let before = await inbox.next(until: deadline)
        XCTAssertFalse(isTick(before), "not due yet: the event")
        clock.advance(by: .milliseconds(100))
        inbox.post(request)
        let due = await inbox.next(until: deadline)
        XCTAssertTrue(isTick(due), "due now: the tick before the event posted at the deadline")
        let after = await inbox.next(until: deadline)
        XCTAssertFalse(isTick(after), "then the event")
    }
}
