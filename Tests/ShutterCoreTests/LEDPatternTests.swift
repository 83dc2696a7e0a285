// SPDX-License-Identifier: BSD-2-Clause
import XCTest
@testable import ShutterCore

final class LEDPatternTests: XCTestCase {
    private func ms(_ v: Int64) -> Duration { .milliseconds(v) }

    /// Rising edges of `pattern` in [from, to), sampled every millisecond.
    private func pulses(_ pattern: LEDPattern, from: Int64 = 0, to: Int64) -> [(start: Int64, length: Int64)] {
        var result: [(Int64, Int64)] = []
        var prev = false
        var start: Int64 = 0
        for t in from..<to {
            let on = pattern.level(at: ms(t))
            if on && !prev { start = t }
            if !on && prev { result.append((start, t - start)) }
            prev = on
        }
        if prev { result.append((start, to - start)) }
        return result
    }

    func testBootingIsASlowBlinkAtExactMilliseconds() {
        let p = StatusIndication.booting.pattern
        XCTAssertEqual(p.repeats, .forever)
        XCTAssertTrue(p.level(at: ms(0)))
        XCTAssertTrue(p.level(at: ms(499)))
        XCTAssertFalse(p.level(at: ms(500)))
        XCTAssertFalse(p.level(at: ms(999)))
        XCTAssertTrue(p.level(at: ms(1000)))
        XCTAssertFalse(p.level(at: ms(10_500)))
        XCTAssertEqual(p.nextChange(after: ms(0)), ms(500))
        XCTAssertEqual(p.nextChange(after: ms(500)), ms(1000))
        XCTAssertEqual(p.nextChange(after: ms(999)), ms(1000))
        XCTAssertEqual(p.nextChange(after: ms(10_200)), ms(10_500))
    }

    func testReadyIsSteadyOnAndNeverChanges() {
        let p = StatusIndication.ready.pattern
        for t: Int64 in [0, 1, 999, 1000, 123_456] { XCTAssertTrue(p.level(at: ms(t))) }
        XCTAssertNil(p.nextChange(after: ms(0)))
        XCTAssertNil(LEDPattern.off.nextChange(after: ms(5)))
        XCTAssertFalse(LEDPattern.off.level(at: ms(5)))
    }

    func testPhotoTakenIsAOneShotBlip() {
        let p = StatusIndication.photoTaken.pattern
        XCTAssertEqual(p.repeats, .once)
        XCTAssertTrue(StatusIndication.photoTaken.isOneShot)
        XCTAssertFalse(p.level(at: ms(0)))
        XCTAssertFalse(p.level(at: ms(99)))
        XCTAssertTrue(p.level(at: ms(100)))
        XCTAssertTrue(p.level(at: ms(199)))
        XCTAssertFalse(p.level(at: ms(200)))
        XCTAssertFalse(p.isFinished(at: ms(299)))
        XCTAssertTrue(p.isFinished(at: ms(300)))
        XCTAssertFalse(p.level(at: ms(5000)))
        XCTAssertEqual(p.nextChange(after: ms(0)), ms(100))
        XCTAssertEqual(p.nextChange(after: ms(250)), ms(300), "the end of a one-shot is a change")
        XCTAssertNil(p.nextChange(after: ms(300)))
    }

    func testErrorCodesBlinkTheirNumberThenPauseLong() {
        for code in LEDErrorCode.allCases {
            let p = StatusIndication.error(code).pattern
            let n = Int64(code.rawValue)
            XCTAssertEqual(p.cycleDuration, ms(n * 500 + 1500), "\(code)")
            let cycle = pulses(p, to: n * 500 + 1500)
            XCTAssertEqual(cycle.count, code.rawValue, "\(code): blinks per cycle")
            XCTAssertTrue(cycle.allSatisfy { $0.length == 200 }, "\(code): short blinks")
            // Dark from the last blink's end to the next cycle: ≥ 1.5 s, far longer
            // than the 300 ms gaps inside the count, so the count's start is seen.
            let lastEnd = cycle.last!.start + cycle.last!.length
            XCTAssertEqual(n * 500 + 1500 - lastEnd, 1800)
            XCTAssertTrue(p.level(at: ms(n * 500 + 1500)), "loops: the next cycle starts on")
            // Two cycles, twice the blinks.
            XCTAssertEqual(pulses(p, to: 2 * (n * 500 + 1500)).count, 2 * code.rawValue)
        }
    }

    func testErrorOnceShowsTheCodeTheGivenTimesThenEnds() {
        let p = StatusIndication.errorOnce(.storageFull, times: 2).pattern
        XCTAssertEqual(p.repeats, .once)
        XCTAssertEqual(pulses(p, to: 10_000).count, 6)
        XCTAssertTrue(p.isFinished(at: ms(2 * 3000)))
        XCTAssertFalse(p.isFinished(at: ms(2 * 3000 - 1)))
    }

    func testBusyRefusedIsThreeQuickFlickers() {
        let p = StatusIndication.busyRefused.pattern
        XCTAssertEqual(p.repeats, .once)
        let ps = pulses(p, to: 1000)
        XCTAssertEqual(ps.map(\.start), [60, 180, 300])
        XCTAssertTrue(ps.allSatisfy { $0.length == 60 })
        XCTAssertTrue(p.isFinished(at: ms(420)))
    }

    func testSavingIsAFastFlicker() {
        let p = StatusIndication.saving.pattern
        XCTAssertEqual(pulses(p, to: 1000).count, 5)
    }

    func testRecordingBlinkGetsFasterAsTheMaxDurationNears() {
        let p = StatusIndication.recording(since: .milliseconds(0), maxDuration: .seconds(60)).pattern
        XCTAssertTrue(p.level(at: ms(0)))
        XCTAssertTrue(p.level(at: ms(499)))
        XCTAssertFalse(p.level(at: ms(500)))
        XCTAssertFalse(p.level(at: ms(999)))
        XCTAssertTrue(p.level(at: ms(1000)))
        let ps = pulses(p, to: 60_000)
        XCTAssertEqual(ps.first?.length, 500, "starts at a 1 s period")
        let lengths = ps.dropLast().map(\.length)
        XCTAssertEqual(lengths, lengths.sorted(by: >), "never slows down")
        let early = ps.filter { $0.start < 10_000 }.count
        let late = ps.filter { $0.start >= 50_000 }.count
        XCTAssertGreaterThan(late, 2 * early, "the last 10 s blink more than twice as often as the first")
        XCTAssertLessThanOrEqual(ps[ps.count - 2].length, 110, "ends near a 200 ms period")
        // Parameterised by elapsed / max: a 10 s limit is already fast at 9 s.
        let short = StatusIndication.recording(since: .milliseconds(0), maxDuration: .seconds(10)).pattern
        let at9s = pulses(short, from: 9000, to: 9900)
        XCTAssertGreaterThanOrEqual(at9s.count, 3)
        XCTAssertTrue(at9s.allSatisfy { $0.length <= 150 })
    }

    func testShutdownCountdownAcceleratesAndEndsAtTheDeadline() {
        let start = MonotonicTime.milliseconds(1000), deadline = MonotonicTime.milliseconds(4000)
        let ind = StatusIndication.shutdownCountdown(start: start, deadline: deadline)
        XCTAssertEqual(ind.origin, start)
        let p = ind.pattern
        XCTAssertEqual(p.repeats, .once)
        XCTAssertEqual(p.cycleDuration, ms(3000))
        XCTAssertTrue(p.isFinished(at: ms(3000)))
        let ps = pulses(p, to: 3000)
        XCTAssertEqual(ps.first?.length, 200)
        XCTAssertLessThanOrEqual(ps.dropLast().last!.length, 60)
    }

    func testLevelBeforeOriginAndEmptyPatterns() {
        let p = StatusIndication.booting.pattern
        XCTAssertTrue(p.level(at: ms(-5)))
        XCTAssertEqual(p.nextChange(after: ms(-5)), ms(500))
        let empty = LEDPattern([.on(0), .off(-3)], repeats: .forever)
        XCTAssertTrue(empty.steps.isEmpty)
        XCTAssertFalse(empty.level(at: ms(10)))
        XCTAssertNil(empty.nextChange(after: ms(0)))
    }

    func testRecordingIndicationStartsItsTimelineAtThePress() {
        let ind = StatusIndication.recording(since: .milliseconds(700), maxDuration: .seconds(60))
        XCTAssertEqual(ind.origin, .milliseconds(700))
        XCTAssertNil(StatusIndication.ready.origin)
    }
}
