// SPDX-License-Identifier: BSD-2-Clause
import XCTest
@testable import ShutterCore

final class LEDFlashTests: XCTestCase {
    func testDoubleTapOrderCyclesOffAutoOn() {
        XCTAssertEqual(FlashMode.off.next, .auto)
        XCTAssertEqual(FlashMode.auto.next, .on)
        XCTAssertEqual(FlashMode.on.next, .off)
    }

    func testOffNeverFiresOnAlwaysFires() {
        let policy = FlashPolicy()
        let dark = FrameMetadata(lux: 1)
        let bright = FrameMetadata(lux: 1000)
        XCTAssertFalse(policy.shouldFire(mode: .off, scene: dark))
        XCTAssertTrue(policy.shouldFire(mode: .on, scene: bright))
        XCTAssertTrue(policy.shouldFire(mode: .on, scene: nil))
    }

    func testAutoUsesLuxWhenKnown() {
        let policy = FlashPolicy(darkLux: 30)
        XCTAssertTrue(policy.shouldFire(mode: .auto, scene: FrameMetadata(lux: 29.9)))
        XCTAssertFalse(policy.shouldFire(mode: .auto, scene: FrameMetadata(lux: 30)))
        // Lux wins over exposure × gain when both are there.
        XCTAssertFalse(policy.shouldFire(mode: .auto, scene: FrameMetadata(exposureTimeMicroseconds: 66_000,
                                                                         analogueGain: 8, lux: 400)))
    }

    func testAutoFallsBackToExposureTimesGain() {
        let policy = FlashPolicy(darkExposureGain: 100_000)
        XCTAssertTrue(policy.shouldFire(mode: .auto, scene: FrameMetadata(exposureTimeMicroseconds: 33_000,
                                                                        analogueGain: 4)))
        XCTAssertFalse(policy.shouldFire(mode: .auto, scene: FrameMetadata(exposureTimeMicroseconds: 10_000,
                                                                         analogueGain: 2)))
        // Digital gain counts too: 25 000 × 2 × 2.5 = 125 000.
        XCTAssertTrue(policy.shouldFire(mode: .auto, scene: FrameMetadata(exposureTimeMicroseconds: 25_000,
                                                                        analogueGain: 2, digitalGain: 2.5)))
        XCTAssertFalse(policy.shouldFire(mode: .auto, scene: FrameMetadata(exposureTimeMicroseconds: 25_000,
                                                                         analogueGain: 2, digitalGain: 1)))
    }

    func testAutoWithoutMeteringDoesNotFire() {
        let policy = FlashPolicy()
        XCTAssertFalse(policy.shouldFire(mode: .auto, scene: nil))
        XCTAssertFalse(policy.shouldFire(mode: .auto, scene: FrameMetadata(exposureTimeMicroseconds: 90_000)))
    }

    func testFlashLEDShowsTheSelectedMode() {
        func count(_ p: LEDPattern) -> Int {
            var n = 0, prev = false
            for t in 0..<Int64(2000) {
                let on = p.level(at: .milliseconds(t))
                if on && !prev { n += 1 }
                prev = on
            }
            return n
        }
        XCTAssertEqual(count(FlashIndication.mode(.off).pattern), 1)
        XCTAssertEqual(count(FlashIndication.mode(.auto).pattern), 2)
        let on = FlashIndication.mode(.on).pattern
        XCTAssertEqual(count(on), 1)
        XCTAssertTrue(on.level(at: .milliseconds(599)))
        XCTAssertFalse(on.level(at: .milliseconds(600)))
        for m in FlashMode.allCases { XCTAssertEqual(FlashIndication.mode(m).pattern.repeats, .once) }
        XCTAssertTrue(FlashIndication.torch.pattern.level(at: .seconds(30)))
        XCTAssertEqual(FlashIndication.torch.pattern.repeats, .forever)
        let fire = FlashIndication.fire(.milliseconds(150)).pattern
        XCTAssertTrue(fire.level(at: .milliseconds(149)))
        XCTAssertTrue(fire.isFinished(at: .milliseconds(150)))
    }
}
