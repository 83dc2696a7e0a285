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
        // Nothing left: the stale deadline is ticked again after `retick`, not at once. The
        // reader's token comes back once the inbox waits (it returned nothing): then the clock moves.
        let work = InFlight()
        let reader = work.token()
        let again = Task { await reader.run { await inbox.next(until: due) } }
        await work.untilIdle()
        XCTAssertTrue(inbox.isWaiting, "waits: nothing given at once")
        XCTAssertEqual(clock.nextDeadline, clock.now() + Inbox.retick, "until the retick")
        clock.advance(by: Inbox.retick - .milliseconds(1))
        XCTAssertTrue(inbox.isWaiting, "not before the retick")
        clock.advance(by: .milliseconds(1))
        XCTAssertEqual(work.count, 1, "the alarm took the reader's token again as it woke it")
        let e = await again.value
        XCTAssertTrue(isTick(e))
    }

    /// The wait is one continuation and the clock's one alarm, set again for each deadline:
    /// no task per wait (the wait used to start two, one of them asleep on the clock).
    func testAWaitStartsNoTaskAndSetsTheInboxsOneAlarmAgain() async {
        let clock = ManualClock(start: .milliseconds(1_000_000))
        let inbox = Inbox(clock: clock)
        let work = InFlight()
        let reader = work.token()
        let rounds = 100
        let loop = Task {
            await reader.run {
                var (ticks, events) = (0, 0)
                while ticks + events < 2 * rounds, let e = await inbox.next(until: clock.now() + .milliseconds(10)) {
                    if case .tick = e { ticks += 1 } else { events += 1 }
                }
                return (ticks, events)
            }
        }
        for _ in 0..<rounds {
            await work.untilIdle()  // the reader waits
            clock.advance(by: .milliseconds(10))  // its deadline: a tick
            await work.untilIdle()
            inbox.post(ServiceEvent.request(.status, .ignored))  // an event
        }
        let (ticks, events) = await loop.value
        XCTAssertEqual(ticks, rounds)
        XCTAssertEqual(events, rounds)
        let waits = inbox.waits, usage = clock.usage
        print("inbox: \(waits.all) waits (\(waits.endedByPost) ended by a post), the clock: \(usage.alarms) alarm "
              + "set \(usage.alarmSets) times, \(usage.sleeps) tasks asleep on it")
        XCTAssertEqual(waits.all, 2 * rounds)
        XCTAssertEqual(waits.endedByPost, rounds)
        XCTAssertEqual(usage.alarms, 1, "one alarm, made with the inbox")
        XCTAssertEqual(usage.alarmSets, 2 * rounds, "set again for each wait")
        XCTAssertEqual(usage.sleeps, 0, "no task slept on the clock for a wait")
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
