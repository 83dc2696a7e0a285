// SPDX-License-Identifier: BSD-2-Clause
import XCTest
import Synchronization
@testable import ShutterCore

/// An LEDOutput that records every write with the clock's time (the role is
/// ours; the GPIO behind it is tested in ShutterHardware).
private struct WriteFailed: Error {}

private final class RecordingLED: LEDOutput {
    let name = "test-led"
    let clock: ManualClock
    private let writes = Mutex<[(on: Bool, ms: Int64)]>([])
    private let failing: Bool

    init(clock: ManualClock, failing: Bool = false) {
        self.clock = clock
        self.failing = failing
    }

    var log: [(on: Bool, ms: Int64)] { writes.withLock { $0 } }
    var isOn: Bool { failing ? false : (writes.withLock { $0.last?.on } ?? false) }
    var count: Int { writes.withLock { $0.count } }

    func set(_ on: Bool) throws {
        writes.withLock { $0.append((on, clock.now().milliseconds)) }
        if failing { throw WriteFailed() }
    }
}

private final class LogSink: Sendable {
    let lines = Mutex<[String]>([])
    func append(_ s: String) { lines.withLock { $0.append(s) } }
    var count: Int { lines.withLock { $0.count } }
}

final class LEDDriverTests: XCTestCase {
    /// Waits (real time, bounded) until the driver's timer task has caught up.
    private func waitUntil(_ what: String, _ condition: () -> Bool) async {
        let deadline = Date().addingTimeInterval(5)
        while !condition() {
            if Date() > deadline { XCTFail("timed out waiting for \(what)"); return }
            await Task.yield()
        }
    }

    private func advance(_ clock: ManualClock, to ms: Int64, led: RecordingLED, expectWrites n: Int) async {
        clock.advance(to: .milliseconds(ms))
        await waitUntil("\(n) writes at \(ms) ms") { led.count >= n }
    }

    private func pairs(_ led: RecordingLED) -> [String] { led.log.map { "\($0.on ? "on" : "off")@\($0.ms)" } }

    func testPlaysASlowBlinkOnTheClock() async {
        let clock = ManualClock()
        let led = RecordingLED(clock: clock)
        let driver = LEDDriver(output: led, clock: clock, log: { _ in })
        await driver.show(.booting)
        XCTAssertEqual(pairs(led), ["on@0"])
        await waitUntil("timer armed") { clock.sleeperCount == 1 }
        await advance(clock, to: 499, led: led, expectWrites: 1)
        XCTAssertEqual(led.count, 1, "no change before 500 ms")
        await advance(clock, to: 500, led: led, expectWrites: 2)
        await waitUntil("timer re-armed") { clock.sleeperCount == 1 }
        await advance(clock, to: 1000, led: led, expectWrites: 3)
        XCTAssertEqual(pairs(led), ["on@0", "off@500", "on@1000"])
        let level = await driver.level
        XCTAssertEqual(level, true)
        await driver.stop()
        XCTAssertEqual(pairs(led).last, "off@1000")
        XCTAssertEqual(clock.sleeperCount, 0)
    }

    func testOneShotPlaysOverTheStateAndTheStateResumes() async {
        let clock = ManualClock()
        let led = RecordingLED(clock: clock)
        let driver = LEDDriver(output: led, clock: clock, log: { _ in })
        await driver.show(.ready)
        await driver.show(.photoTaken)
        XCTAssertEqual(pairs(led), ["on@0", "off@0"])
        for (t, n) in [(100, 3), (200, 4), (300, 5)] as [(Int64, Int)] {
            await waitUntil("timer armed") { clock.sleeperCount == 1 }
            await advance(clock, to: t, led: led, expectWrites: n)
        }
        XCTAssertEqual(pairs(led), ["on@0", "off@0", "on@100", "off@200", "on@300"])
        await waitUntil("steady: no timer") { clock.sleeperCount == 0 }
    }

    func testRecordingPatternKeepsItsTimelineFromThePressAcrossAnOverlay() async {
        let clock = ManualClock(start: .milliseconds(1100))
        let led = RecordingLED(clock: clock)
        let driver = LEDDriver(output: led, clock: clock, log: { _ in })
        // holdStarted at 1100 for a press at 100: 1000 ms into the pattern, whose
        // first cycle is on 0-500, off 500-1000, on 1000-1493.
        await driver.show(.recording(since: .milliseconds(100), maxDuration: .seconds(60)))
        XCTAssertEqual(pairs(led), ["on@1100"])
        await waitUntil("timer armed") { clock.sleeperCount == 1 }
        await advance(clock, to: 1593, led: led, expectWrites: 2)
        XCTAssertEqual(pairs(led).last, "off@1593")
        // A snapshot's blip plays over it, then the blink continues where it is on the timeline.
        await driver.show(.photoTaken)   // off 1593-1693, on -1793, off -1893
        for (t, n) in [(1693, 3), (1793, 4)] as [(Int64, Int)] {
            await waitUntil("timer armed") { clock.sleeperCount == 1 }
            await advance(clock, to: t, led: led, expectWrites: n)
        }
        await waitUntil("timer armed") { clock.sleeperCount == 1 }
        // At 1893 the overlay ends: the recording pattern (offset 1793) is off at that moment,
        // so nothing changes until its next on-step.
        clock.advance(to: .milliseconds(1893))
        await waitUntil("timer re-armed after overlay") { clock.sleeperCount == 1 }
        XCTAssertEqual(pairs(led), ["on@1100", "off@1593", "on@1693", "off@1793"])
        await driver.stop()
    }

    func testAFailingLEDIsLoggedOnceAndNeverThrows() async {
        let clock = ManualClock()
        let led = RecordingLED(clock: clock, failing: true)
        let sink = LogSink()
        let driver = LEDDriver(output: led, clock: clock, log: { sink.append($0) })
        await driver.show(.booting)
        await waitUntil("timer armed") { clock.sleeperCount == 1 }
        await advance(clock, to: 500, led: led, expectWrites: 2)
        await waitUntil("timer armed") { clock.sleeperCount == 1 }
        await advance(clock, to: 1000, led: led, expectWrites: 3)
        await driver.show(.error(.storageFull))
        let failures = await driver.writeFailures
        XCTAssertGreaterThanOrEqual(failures, 3)
        XCTAssertEqual(sink.count, 1, "logged once, not per write")
        XCTAssertTrue(sink.lines.withLock { $0[0] }.contains("test-led"))
        let level = await driver.level
        XCTAssertNil(level, "no write ever succeeded")
        await driver.stop()
    }

    func testNewStateReplacesTheOldTimer() async {
        let clock = ManualClock()
        let led = RecordingLED(clock: clock)
        let driver = LEDDriver(output: led, clock: clock, log: { _ in })
        await driver.show(.saving)
        await waitUntil("timer armed") { clock.sleeperCount == 1 }
        await driver.show(.ready)
        await waitUntil("old timer cancelled") { clock.sleeperCount == 0 }
        clock.advance(to: .milliseconds(1000))
        for _ in 0..<100 { await Task.yield() }
        XCTAssertEqual(pairs(led), ["on@0"], "saving began on, ready is on: no spurious writes")
    }
}
