// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import Synchronization
import XCTest
import ShutterControl
import ShutterCore
@testable import ShutterService

/// Interval capture when the wall clock moves against the monotonic clock, on the whole
/// service in process and the manual clock: NTP stepping it hours forward or back, a step
/// back of less than an interval, and daylight saving in a real time zone (Europe/Berlin,
/// TZ set for the test: the offset read as the system's wall clock reads it). The schedule
/// goes on in real time, one photo a slot: no burst of catch-up photos, no hour without
/// photos, no slots that never were counted as skipped.
final class IntervalClockJumpTests: XCTestCase {
    /// A trusted wall clock on the test's manual clock that the test can step (`step`), with
    /// the UTC offset of the process's time zone at each instant (localtime_r, as
    /// SystemWallClock), or a fixed one.
    final class SteppableWallClock: WallClock, Sendable {
        let clock: ManualClock
        let at: MonotonicTime
        let startUTC: Int64
        let fixedOffset: Int32?
        private let stepped = Mutex<Int64>(0)

        init(clock: ManualClock, utc: Int64, fixedOffset: Int32? = nil) {
            self.clock = clock
            at = clock.now()
            startUTC = utc
            self.fixedOffset = fixedOffset
        }

        /// NTP (or a person) sets the clock by `seconds`.
        func step(_ seconds: Int64) { stepped.withLock { $0 += seconds } }

        func now() -> WallTime {
            let base = WallTime(secondsSinceEpoch: startUTC + stepped.withLock { $0 }, nanoseconds: 250_000_000,
                                isTrusted: true).adding(clock.now() - at)
            var t = time_t(base.secondsSinceEpoch)
            var local = tm()
            localtime_r(&t, &local)
            return WallTime(secondsSinceEpoch: base.secondsSinceEpoch, nanoseconds: base.nanoseconds,
                            utcOffsetSeconds: fixedOffset ?? Int32(local.tm_gmtoff), isTrusted: true)
        }
    }

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

    func interval(_ r: InProcessRig) async throws -> IntervalReport {
        let status = await r.status()
        return try XCTUnwrap(status.interval)
    }

    /// 2026-12-05 11:58:10 UTC (12:58:10 in Berlin).
    static let december: Int64 = 1_796_471_890

    func start(_ wall: SteppableWallClock, every: Int = 60) async throws -> InProcessRig {
        let json = #"{"video": {"fps": 10}, "interval": {"enabled": true, "everySeconds": \#(every)}}"#
        let r = try await InProcessRig.start(self, json: json, clock: wall.clock, wallClock: wall)
        try await r.advance(until: "the first slot", limit: .seconds(Int64(every) + 5)) {
            (try? await self.interval(r).taken) == 1
        }
        return r
    }

    func testAStepForwardByHoursTakesNoCatchUpPhotosAndGoesOn() async throws {
        let clock = ManualClock(start: .milliseconds(1_000_000))
        let wall = SteppableWallClock(clock: clock, utc: Self.december)
        let r = try await start(wall)
        await r.advance(by: .seconds(120))
        let before = try await interval(r)
        XCTAssertEqual(before.taken, 3, "\(before)")
        // NTP corrects the clock by 3 h 0 min 25 s at once.
        wall.step(3 * 3600 + 25)
        await r.advance(by: .seconds(5))
        let just = try await interval(r)
        XCTAssertLessThanOrEqual(just.taken - before.taken, 1, "no burst of catch-up photos: \(just)")
        XCTAssertLessThanOrEqual(just.skipped - before.skipped, 1,
                                 "the 180 slots the step jumped over never were: not skipped \(just)")
        // Real time goes on: one photo a minute, on the grid of the new time.
        await r.advance(by: .seconds(180))
        let after = try await interval(r)
        XCTAssertEqual(after.taken - just.taken, 3, "\(after)\n\(r.log.text.suffix(1500))")
        XCTAssertEqual(try XCTUnwrap(after.lastSlotSeconds) % 60, 0)
        XCTAssertTrue(after.lastSlot?.hasPrefix("2026-12-05T16:0") == true, "slots on the new time: \(after)")
        try await r.advance(until: "every photo saved") { r.files("JPG").count == after.taken }
        XCTAssertTrue(r.log.text.contains("wall clock"), "the log says the clock was set")
    }

    func testAStepBackByAnHourDoesNotStopTheSchedule() async throws {
        let clock = ManualClock(start: .milliseconds(1_000_000))
        let wall = SteppableWallClock(clock: clock, utc: Self.december)
        let r = try await start(wall)
        await r.advance(by: .seconds(60))
        let before = try await interval(r)
        wall.step(-3600)
        await r.advance(by: .seconds(180))
        let after = try await interval(r)
        XCTAssertEqual(after.taken - before.taken, 3, "one photo a minute goes on after the step back: \(after)\n"
                       + r.log.text.suffix(1500))
        XCTAssertEqual(after.skipped, before.skipped, "\(after)")
        XCTAssertTrue(after.lastSlot?.hasPrefix("2026-12-05T12:0") == true, "slots on the new time: \(after)")
    }

    func testAStepBackDoesNotTakeASlotAgainRightAfterItsPhoto() async throws {
        let clock = ManualClock(start: .milliseconds(1_000_000))
        let wall = SteppableWallClock(clock: clock, utc: Self.december)
        let r = try await start(wall)
        // 2 s after a slot's photo (S2) the clock goes back 80 s: the slot before (S1) comes
        // again 18 s later, S2 itself 78 s later.
        let first = try await interval(r)
        let untilNext = try XCTUnwrap(first.nextInSeconds)
        await r.advance(by: .milliseconds(Int64(untilNext * 1000) + 2000))
        let taken = try await interval(r)
        XCTAssertEqual(taken.taken, 2, "\(taken)")
        wall.step(-80)
        await r.advance(by: .seconds(40))
        let again = try await interval(r)
        XCTAssertEqual(again.taken, 2, "no photo 18 s after the last one: \(again)\n\(r.log.text.suffix(1500))")
        XCTAssertEqual(again.skipped, 0, "passed, not skipped: \(again)")
        // A real interval on, the next slot on the grid is taken: the schedule goes on.
        await r.advance(by: .seconds(60))
        let next = try await interval(r)
        XCTAssertEqual(next.taken, 3, "\(next)\n\(r.log.text.suffix(1500))")
        XCTAssertTrue(r.log.text.contains("came again as the clock went back"), "the log says why")
    }

    /// 2026-03-29 00:57:10 UTC: 01:57:10 CET in Berlin; at 01:00 UTC the clocks go to 03:00 CEST.
    static let springForward: Int64 = 1_774_745_830
    /// 2026-10-25 00:57:10 UTC: 02:57:10 CEST in Berlin; at 01:00 UTC the clocks go back to 02:00 CET.
    static let fallBack: Int64 = 1_792_889_830

    func testSpringForwardInBerlinKeepsAPhotoEachMinuteWithoutSkippingTheHourThatIsNot() async throws {
        let clock = ManualClock(start: .milliseconds(1_000_000))
        let wall = SteppableWallClock(clock: clock, utc: Self.springForward)
        XCTAssertEqual(wall.now().utcOffsetSeconds, 3600, "CET before the change (TZ=Europe/Berlin)")
        let r = try await start(wall)
        let before = try await interval(r)
        XCTAssertTrue(before.nextSlot?.hasSuffix("+01:00") == true, "\(before)")
        await r.advance(by: .seconds(360))
        let after = try await interval(r)
        XCTAssertEqual(after.taken - before.taken, 6, "a photo each real minute across the change: \(after)\n"
                       + r.log.text.suffix(1500))
        XCTAssertEqual(after.skipped, 0, "02:00-03:00 does not exist that night: none of it skipped \(after)")
        XCTAssertTrue(after.lastSlot?.hasPrefix("2026-03-29T03:0") == true, "\(after)")
        XCTAssertTrue(after.lastSlot?.hasSuffix("+02:00") == true, "local time in CEST: \(after)")
    }

    func testFallBackInBerlinGoesOnThroughTheRepeatedHour() async throws {
        let clock = ManualClock(start: .milliseconds(1_000_000))
        let wall = SteppableWallClock(clock: clock, utc: Self.fallBack)
        XCTAssertEqual(wall.now().utcOffsetSeconds, 7200, "CEST before the change (TZ=Europe/Berlin)")
        let r = try await start(wall)
        let before = try await interval(r)
        await r.advance(by: .seconds(360))
        let after = try await interval(r)
        XCTAssertEqual(after.taken - before.taken, 6, "a photo each real minute through 02:00-03:00 twice: \(after)\n"
                       + r.log.text.suffix(1500))
        XCTAssertEqual(after.skipped, 0, "\(after)")
        XCTAssertTrue(after.lastSlot?.hasPrefix("2026-10-25T02:0") == true, "\(after)")
        XCTAssertTrue(after.lastSlot?.hasSuffix("+01:00") == true, "local time in CET: \(after)")
    }
}
