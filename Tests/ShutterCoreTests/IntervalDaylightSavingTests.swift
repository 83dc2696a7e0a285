// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
@testable import ShutterCore

/// Interval capture's plan and timeline across the wall clock's steps and daylight saving,
/// in a real time zone (Europe/Berlin, TZ set for the test; the local time as the system's
/// wall clock reads it: UTC plus localtime_r's offset): the daily windows stay in local
/// time on both sides of a change, the slots keep a real-time rhythm through it, and a step
/// of the wall clock or of the offset is seen for what it is.
final class IntervalDaylightSavingTests: XCTestCase {
    private var savedTZ: String?

    override func setUp() {
        savedTZ = ProcessInfo.processInfo.environment["TZ"]
        setenv("TZ", "Europe/Berlin", 1)
        tzset()
    }

    override func tearDown() {
        if let savedTZ { setenv("TZ", savedTZ, 1) } else { unsetenv("TZ") }
        tzset()
    }

    /// The plan's timeline at UTC instant `utc`: UTC plus Berlin's offset then.
    func local(_ utc: Int64) -> Int64 {
        var t = time_t(utc)
        var tm = tm()
        localtime_r(&t, &tm)
        return utc + Int64(tm.tm_gmtoff)
    }

    /// 2026-03-28 00:00 UTC (the day before the spring change) and 2026-10-24 00:00 UTC.
    let march28: Int64 = 1_774_656_000
    let october24: Int64 = 1_792_800_000

    /// The UTC instants, every minute over two days from `from`, at which the plan has a slot.
    func slots(_ plan: IntervalPlan, from: Int64) -> [Int64] {
        stride(from: from, to: from + 2 * 86_400, by: 60).filter { u in
            let l = local(u)
            return l % plan.everySeconds == 0 && plan.isInWindow(l)
        }
    }

    func testADailyWindowStaysInLocalTimeOnBothSidesOfBerlinsChanges() throws {
        let plan = IntervalPlan(everySeconds: 600, windows: try IntervalPlan.windows("06:00-07:00"))
        // Spring: 06:00-07:00 is 05:00-06:00 UTC in CET (the 28th), 04:00-05:00 UTC in CEST (the 29th).
        let tenMinutes: [Int64] = (0..<6).map { Int64($0) * 600 }
        let cet28: [Int64] = tenMinutes.map { march28 + 5 * 3600 + $0 }
        let cest29: [Int64] = tenMinutes.map { march28 + 86_400 + 4 * 3600 + $0 }
        XCTAssertEqual(slots(plan, from: march28), cet28 + cest29)
        // Autumn: 04:00-05:00 UTC in CEST (the 24th), 05:00-06:00 UTC in CET (the 25th).
        let cest24: [Int64] = tenMinutes.map { october24 + 4 * 3600 + $0 }
        let cet25: [Int64] = tenMinutes.map { october24 + 86_400 + 5 * 3600 + $0 }
        XCTAssertEqual(slots(plan, from: october24), cest24 + cet25)
        // The next slot read before the change is the window's opening after it, in local time.
        let eveningBefore = local(march28 + 20 * 3600)
        let next = try XCTUnwrap(plan.nextSlot(after: eveningBefore))
        XCTAssertEqual(next % 86_400, 6 * 3600, "06:00 local")
        XCTAssertEqual(next - local(march28 + 86_400 + 4 * 3600), 0, "= 04:00 UTC on the 29th (CEST)")
    }

    func testSlotsEveryMinuteKeepARealMinuteThroughTheChanges() {
        let plan = IntervalPlan(everySeconds: 60)
        // Across 01:00 UTC on 2026-03-29 (02:00 CET -> 03:00 CEST) and 2026-10-25 (03:00 CEST -> 02:00 CET):
        // a slot each real minute, the local hour skipped or repeated.
        for change: Int64 in [march28 + 86_400 + 3600, october24 + 86_400 + 3600] {
            let u = stride(from: change - 600, to: change + 600, by: 60).filter { local($0) % 60 == 0 }
            XCTAssertEqual(u.count, 20)
            let l = u.map(local)
            XCTAssertTrue(l.allSatisfy { plan.latestSlot(atOrBefore: $0) == $0 })
            // Local time steps an hour once, by a minute otherwise.
            let steps = zip(l.dropFirst(), l).map { $0 - $1 }
            XCTAssertEqual(steps.filter { $0 != 60 }.count, 1, "\(steps)")
        }
    }

    func testATimelineStepIsTheWallClocksOrTheOffsetsAndSlewingIsNot() {
        var t = IntervalTimeline()
        let s: Int64 = 1_000_000_000
        XCTAssertNil(t.step(timelineNanoseconds: 1000 * s, monotonicNanoseconds: 5 * s), "the first look: nothing to compare")
        XCTAssertNil(t.step(timelineNanoseconds: 1010 * s, monotonicNanoseconds: 15 * s), "both moved alike")
        XCTAssertNil(t.step(timelineNanoseconds: 1020 * s + 500_000, monotonicNanoseconds: 25 * s), "slewing: 0.5 ms")
        XCTAssertEqual(t.step(timelineNanoseconds: (1030 + 10_825) * s, monotonicNanoseconds: 35 * s),
                       10_825 * s - 500_000, "NTP: 3 h 0 min 25 s forward")
        XCTAssertEqual(t.step(timelineNanoseconds: (1040 + 10_825 - 3600) * s, monotonicNanoseconds: 45 * s),
                       -3600 * s, "an hour back (or a fall-back's offset)")
        XCTAssertNil(t.step(timelineNanoseconds: (1050 + 10_825 - 3600) * s, monotonicNanoseconds: 55 * s))
        t.forget()
        XCTAssertNil(t.step(timelineNanoseconds: 0, monotonicNanoseconds: 99 * s), "forgotten: a first look again")
        // Daylight saving seen through the system's local time: the offset's hour is the step.
        var dst = IntervalTimeline()
        let change = march28 + 86_400 + 3600
        XCTAssertNil(dst.step(timelineNanoseconds: local(change - 1) * s, monotonicNanoseconds: 100 * s))
        XCTAssertEqual(dst.step(timelineNanoseconds: local(change + 1) * s, monotonicNanoseconds: 102 * s), 3600 * s)
        XCTAssertEqual(IntervalTimeline.words(10_825 * s), "3 h 0 min 25 s")
        XCTAssertEqual(IntervalTimeline.words(-30 * s), "30 s")
    }
}
