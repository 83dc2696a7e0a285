// SPDX-License-Identifier: BSD-2-Clause
import XCTest
@testable import ShutterCore

final class ClockTests: XCTestCase {
    func testMillisecondsRoundTowardNegativeInfinity() {
        XCTAssertEqual(MonotonicTime(nanoseconds: 1_999_999).milliseconds, 1)
        XCTAssertEqual(MonotonicTime(nanoseconds: -1).milliseconds, -1)
        XCTAssertEqual((MonotonicTime.milliseconds(5) + .milliseconds(7)).milliseconds, 12)
        XCTAssertEqual((MonotonicTime.milliseconds(5) - MonotonicTime.milliseconds(7)), .milliseconds(-2))
    }

    func testManualClockWakesSleepersOnlyWhenAdvancedPastDeadline() async throws {
        let clock = ManualClock()
        let task = Task { try await clock.sleep(until: .milliseconds(100)); return clock.now() }
        while clock.sleeperCount == 0 { await Task.yield() }
        clock.advance(to: .milliseconds(99))
        XCTAssertEqual(clock.sleeperCount, 1)
        clock.advance(by: .milliseconds(1))
        let woke = try await task.value
        XCTAssertEqual(woke, .milliseconds(100))
    }

    func testManualClockSleepIsCancellable() async {
        let clock = ManualClock()
        let task = Task { try await clock.sleep(until: .milliseconds(100)) }
        while clock.sleeperCount == 0 { await Task.yield() }
        task.cancel()
        do { try await task.value; XCTFail("expected cancellation") } catch { XCTAssertTrue(error is CancellationError) }
        XCTAssertEqual(clock.sleeperCount, 0)
    }

    func testSystemClockIsMonotonic() {
        let c = SystemClock()
        let a = c.now(), b = c.now()
        XCTAssertLessThanOrEqual(a, b)
    }

    func testWallTimeOfAnEarlierMonotonicInstant() {
        let wall = FixedWallClock(WallTime(secondsSinceEpoch: 1000, nanoseconds: 100_000_000, isTrusted: true))
        let mono = ManualClock(start: .milliseconds(5000))
        let t = wall.wallTime(at: .milliseconds(4700), monotonic: mono)  // 300 ms ago
        XCTAssertEqual(t.secondsSinceEpoch, 999)
        XCTAssertEqual(t.nanoseconds, 800_000_000)
        XCTAssertTrue(t.isTrusted)
    }
}
