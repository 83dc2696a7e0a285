// SPDX-License-Identifier: BSD-2-Clause
import XCTest
import ShutterCore
@testable import ShutterSim

/// The simulated LED through the role the service reads for `status`.
final class SimLEDTests: XCTestCase {
    func testIsOnIsTheLevelLastWrittenAndAFailedWriteKeepsIt() throws {
        let sim = SimLED(name: "status")
        let led: any LEDOutput = sim
        XCTAssertFalse(led.isOn)
        try led.set(true)
        XCTAssertTrue(led.isOn)
        sim.failing = true
        XCTAssertThrowsError(try led.set(false))
        XCTAssertTrue(led.isOn, "the failed write did not reach the LED")
        sim.failing = false
        try led.set(false)
        XCTAssertFalse(led.isOn)
        XCTAssertEqual(sim.changes, 2)
    }
}
