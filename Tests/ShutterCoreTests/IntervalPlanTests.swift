// SPDX-License-Identifier: BSD-2-Clause
import XCTest
@testable import ShutterCore

/// Interval capture's timetable: slots on a grid aligned to the epoch, daily windows
/// (one crossing midnight), the count, the configuration's words.
final class IntervalPlanTests: XCTestCase {
    /// 2026-12-05 00:00:00 on the plan's timeline (local seconds since the epoch).
    let midnight: Int64 = 1_796_428_800
    func at(_ h: Int64, _ m: Int64 = 0, _ s: Int64 = 0, day: Int64 = 0) -> Int64 {
        midnight + day * 86_400 + h * 3600 + m * 60 + s
    }

    func testSlotsAreMultiplesOfTheIntervalSoARestartKeepsTheGrid() {
        let plan = IntervalPlan(everySeconds: 60)
        XCTAssertEqual(plan.nextSlot(after: at(12, 0, 17)), at(12, 1))
        // Strictly after: a slot at t is not the next one.
        XCTAssertEqual(plan.nextSlot(after: at(12, 1)), at(12, 2))
        XCTAssertEqual(plan.latestSlot(atOrBefore: at(12, 1)), at(12, 1))
        XCTAssertEqual(plan.latestSlot(atOrBefore: at(12, 1, 59)), at(12, 1))
        // Another start of the same plan finds the same grid.
        XCTAssertEqual(IntervalPlan(everySeconds: 60).nextSlot(after: at(12, 0, 42)), at(12, 1))
        let hourly = IntervalPlan(everySeconds: 3600)
        XCTAssertEqual(hourly.nextSlot(after: at(9, 59, 59)), at(10))
        // An interval that does not divide a day: multiples from the epoch, not from midnight.
        let seven = IntervalPlan(everySeconds: 7)
        let next = seven.nextSlot(after: at(8))!
        XCTAssertEqual(next % 7, 0)
        XCTAssertTrue(next > at(8) && next <= at(8) + 7)
        // Monotonic seconds (small numbers, no windows): the same arithmetic.
        XCTAssertEqual(IntervalPlan(everySeconds: 5).nextSlot(after: 1003), 1005)
        XCTAssertEqual(IntervalPlan(everySeconds: 5).latestSlot(atOrBefore: 1003), 1000)
    }

    func testWindowsKeepSlotsInsideThemStartInclusiveEndExclusive() throws {
        let plan = IntervalPlan(everySeconds: 600, windows: try IntervalPlan.windows("06:00-09:00,17:00-20:00"))
        XCTAssertEqual(plan.nextSlot(after: at(3)), at(6))
        XCTAssertEqual(plan.nextSlot(after: at(6)), at(6, 10))
        // 09:00 is the end, not in the window: the next is the evening's first.
        XCTAssertEqual(plan.nextSlot(after: at(8, 50)), at(17))
        XCTAssertFalse(plan.isInWindow(at(9)))
        XCTAssertTrue(plan.isInWindow(at(8, 59, 59)))
        // After the evening window: tomorrow morning.
        XCTAssertEqual(plan.nextSlot(after: at(19, 50)), at(6, day: 1))
        XCTAssertEqual(plan.latestSlot(atOrBefore: at(12)), at(8, 50))
        XCTAssertEqual(plan.latestSlot(atOrBefore: at(5)), at(19, 50, day: -1))
    }

    func testAWindowCrossingMidnight() throws {
        let plan = IntervalPlan(everySeconds: 3600, windows: try IntervalPlan.windows("22:00-06:00"))
        XCTAssertEqual(plan.nextSlot(after: at(12)), at(22))
        XCTAssertEqual(plan.nextSlot(after: at(23)), at(0, day: 1))
        XCTAssertEqual(plan.nextSlot(after: at(4, day: 1)), at(5, day: 1))
        // 06:00 is the end: the next is 22:00.
        XCTAssertEqual(plan.nextSlot(after: at(5, day: 1)), at(22, day: 1))
        XCTAssertTrue(plan.isInWindow(at(2)))  // opened yesterday at 22:00
        XCTAssertFalse(plan.isInWindow(at(6)))
        XCTAssertEqual(plan.latestSlot(atOrBefore: at(12)), at(5))
        XCTAssertEqual(plan.latestSlot(atOrBefore: at(23, 30)), at(23))
    }

    func testAWindowNotOnTheGridStartsAtItsFirstSlot() throws {
        // Every 15 min, from 06:07: the first slot in it is 06:15.
        let plan = IntervalPlan(everySeconds: 900, windows: try IntervalPlan.windows("06:07-06:40"))
        XCTAssertEqual(plan.nextSlot(after: at(1)), at(6, 15))
        XCTAssertEqual(plan.nextSlot(after: at(6, 30)), at(6, 15, day: 1))
    }

    func testAWindowWithoutASlotHasNoNextSlotWithinTheSearch() throws {
        // Daily at midnight, window in the morning: never.
        let plan = IntervalPlan(everySeconds: 86_400, windows: try IntervalPlan.windows("06:00-09:00"))
        XCTAssertNil(plan.nextSlot(after: at(1)))
        XCTAssertNil(plan.latestSlot(atOrBefore: at(1)))
        // The configuration says so, naming the key.
        var config = ShutterConfig()
        config.interval = .init(enabled: true, everySeconds: 86_400, windows: "06:00-09:00", count: 0)
        let v = try XCTUnwrap(ConfigSchema.crossCheck(config))
        XCTAssertEqual(v.keyPath, "interval.windows")
        XCTAssertTrue(v.message.contains("holds no slot"), v.message)
    }

    func testTheCountEndsThePlan() {
        let plan = IntervalPlan(everySeconds: 10, count: 3)
        XCTAssertFalse(plan.isFinished(taken: 2))
        XCTAssertTrue(plan.isFinished(taken: 3))
        XCTAssertFalse(IntervalPlan(everySeconds: 10, count: 0).isFinished(taken: 1_000_000))
    }

    func testWindowsTextAndItsErrors() throws {
        XCTAssertEqual(try IntervalPlan.windows(""), [])
        XCTAssertEqual(try IntervalPlan.windows("  "), [])
        XCTAssertEqual(try IntervalPlan.windows(" 22:00 - 06:00 , 12:00-24:00"),
                       [.init(start: 22 * 3600, end: 6 * 3600), .init(start: 12 * 3600, end: 86_400)])
        for bad in ["6:00-09:00", "25:00-06:00", "06:60-07:00", "06:00", "06:00-07:00,", "06:00-06:00", "00:00-24:00",
                    "24:00-06:00", "a:bc-07:00"] {
            XCTAssertThrowsError(try IntervalPlan.windows(bad), bad)
        }
    }

    func testTheSchemaNamesTheKeyAndSaysWhatToWrite() throws {
        let key = try XCTUnwrap(ConfigSchema.byPath["interval.windows"])
        XCTAssertThrowsError(try ConfigSchema.check(.string("22-06"), for: key)) { error in
            let v = error as! ConfigSchema.Violation
            XCTAssertEqual(v.keyPath, "interval.windows")
            XCTAssertTrue(v.message.contains("\"interval.windows\" is \"22-06\""), v.message)
            XCTAssertTrue(v.message.contains("HH:MM-HH:MM"), v.message)
            XCTAssertTrue(v.message.contains("22:00-06:00"), v.message)
        }
        XCTAssertEqual(try ConfigSchema.check(.string("22:00 - 06:00"), for: key), .string("22:00-06:00"))
        let every = try XCTUnwrap(ConfigSchema.byPath["interval.everySeconds"])
        XCTAssertThrowsError(try ConfigSchema.check(.int(0), for: every))
        XCTAssertThrowsError(try ConfigSchema.check(.int(86_401), for: every))
        let defaults = ShutterConfig().interval
        XCTAssertEqual(defaults, .init(enabled: false, everySeconds: 60, windows: "", count: 0))
    }
}
