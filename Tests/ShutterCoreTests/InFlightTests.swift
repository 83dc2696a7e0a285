// SPDX-License-Identifier: BSD-2-Clause
import Dispatch
import Synchronization
import XCTest
@testable import ShutterCore

/// Work in flight (`InFlight`, `WorkToken`) and the clock's part in it: a sleeper's token
/// is given back while it sleeps and taken again by the clock before it wakes; alarms.
final class InFlightTests: XCTestCase {
    func testASleeperGivesItsTokenBackAndTheClockTakesItAgainBeforeTheSleeperRuns() async {
        let clock = ManualClock(start: .milliseconds(0))
        let work = InFlight()
        let token = work.token()
        XCTAssertEqual(work.count, 1)
        let sleeper = Task {
            await token.run {
                try? await clock.sleep(until: .milliseconds(100))
                return work.count
            }
        }
        await work.untilIdle()
        XCTAssertEqual(clock.sleeperCount, 1, "idle once the sleeper sleeps on the clock")
        clock.advance(to: .milliseconds(100))
        XCTAssertEqual(work.count, 1, "taken again by advance, before the sleeper runs")
        let seen = await sleeper.value
        XCTAssertEqual(seen, 1, "the woken sleeper's work counts")
        token.end()
        XCTAssertEqual(work.count, 0)
    }

    func testACancelledSleeperHasItsTokenBack() async {
        let clock = ManualClock(start: .milliseconds(0))
        let work = InFlight()
        let token = work.token()
        let sleeper = Task { await token.run { try? await clock.sleep(until: .milliseconds(100)) } }
        await work.untilIdle()
        sleeper.cancel()
        await sleeper.value
        XCTAssertEqual(work.count, 1, "held again after the cancelled sleep")
        token.end()
        token.end()
        XCTAssertEqual(work.count, 0, "ended once")
    }

    /// A task started under a token sees it as `current` but does not give it back: the
    /// token's own task is still at work.
    func testATokenIsGivenBackOnlyByItsOwnTask() async {
        let clock = ManualClock(start: .milliseconds(0))
        let work = InFlight()
        let token = work.token()
        let child: Task<Void, Never> = await token.run {
            let child = Task { _ = try? await clock.sleep(until: .milliseconds(100)) }
            while clock.sleeperCount == 0 { await Task.yield() }
            return child
        }
        XCTAssertEqual(work.count, 1, "the child's sleep did not give the parent's token back")
        clock.advance(to: .milliseconds(100))
        await child.value
        XCTAssertEqual(work.count, 1)
        token.end()
        XCTAssertEqual(work.count, 0)
    }

    func testUntilIdleReturnsAtTheLastEndAndSnapshotsCountTheChanges() async {
        let work = InFlight()
        let before = work.snapshot
        work.begin()
        work.begin()
        let waiter = Task { await work.untilIdle() }
        work.end()
        XCTAssertEqual(work.count, 1)
        work.end()
        await waiter.value
        let after = work.snapshot
        XCTAssertEqual(after.count, 0)
        XCTAssertEqual(after.changes, before.changes &+ 4, "every begin and end is a change")
    }

    func testADroppedTokenEnds() {
        let work = InFlight()
        var token: WorkToken? = work.token()
        XCTAssertEqual(work.count, 1)
        withExtendedLifetime(token) {}
        token = nil
        XCTAssertEqual(work.count, 0)
    }

    func testAManualAlarmFiresInAdvanceOnceAndIsSetAgainOrCancelled() {
        let clock = ManualClock(start: .milliseconds(0))
        let fired = Mutex(0)
        let alarm = clock.makeAlarm { fired.withLock { $0 += 1 } }
        alarm.set(.milliseconds(50))
        XCTAssertEqual(clock.nextDeadline, .milliseconds(50))
        alarm.set(.milliseconds(30))
        XCTAssertEqual(clock.nextDeadline, .milliseconds(30), "set again: the new deadline instead")
        clock.advance(to: .milliseconds(40))
        XCTAssertEqual(fired.withLock { $0 }, 1)
        clock.advance(to: .milliseconds(60))
        XCTAssertEqual(fired.withLock { $0 }, 1, "once per set")
        alarm.set(.milliseconds(10))
        XCTAssertEqual(fired.withLock { $0 }, 2, "a deadline passed fires at once")
        alarm.set(.milliseconds(100))
        alarm.cancel()
        clock.advance(to: .milliseconds(200))
        XCTAssertEqual(fired.withLock { $0 }, 2)
        XCTAssertNil(clock.nextDeadline)
        XCTAssertEqual(clock.usage.alarms, 1)
        XCTAssertEqual(clock.usage.sleeps, 0)
    }

    func testASystemAlarmFiresAtItsDeadlineOnly() {
        let clock = SystemClock()
        let fired = DispatchSemaphore(value: 0)
        let firedAt = Mutex<MonotonicTime?>(nil)
        let alarm = clock.makeAlarm {
            firedAt.withLock { $0 = clock.now() }
            fired.signal()
        }
        let never = clock.makeAlarm { XCTFail("a cancelled alarm fired") }
        never.set(clock.now() + .milliseconds(30))
        never.cancel()
        let deadline = clock.now() + .milliseconds(40)
        alarm.set(clock.now() + .seconds(60))
        alarm.set(deadline)
        XCTAssertEqual(fired.wait(timeout: .now() + 10), .success)
        let at = try? XCTUnwrap(firedAt.withLock { $0 })
        XCTAssertGreaterThanOrEqual(at ?? deadline, deadline, "not before its deadline")
        XCTAssertEqual(fired.wait(timeout: .now() + 0.1), .timedOut, "once")
    }
}
