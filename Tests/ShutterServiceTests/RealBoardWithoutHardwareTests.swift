// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
@testable import ShutterService

/// `shutterd --board rpi5` on a machine with no camera, GPIO chip or sound card:
/// it waits and says what is missing; no crash, no Swift trap.
final class RealBoardWithoutHardwareTests: XCTestCase {
    func testPi5BoardWithoutHardwareWaitsAndSaysWhatIsMissing() throws {
        if FileManager.default.fileExists(atPath: "/dev/gpiochip0") || FileManager.default.fileExists(atPath: "/dev/media0") {
            throw XCTSkip("this machine has GPIO or camera devices")
        }
        let d = try DaemonHarness()
        d.board = "rpi5"
        try d.start(waitReady: false)
        try d.waitFor("the camera check", timeout: 20) { d.log().contains("no camera found") }
        // It answers while it waits for the camera (what it reports, not a fixed pause).
        try d.waitFor("status while waiting for the camera", timeout: 20) { try d.status()["state"] as? String == "booting" }
        XCTAssertEqual(d.process?.isRunning, true, "it waits for the camera instead of exiting")
        let log = d.log()
        XCTAssertTrue(log.contains("no camera found by libcamera"), log)
        XCTAssertTrue(log.contains("ribbon cable"), "says what to check")
        XCTAssertTrue(log.contains("GPIO17") && log.contains("gpio"), "names the missing button line")
        // The Pi boards' audio device is "auto" (the first USB capture card): none here.
        XCTAssertTrue(log.contains("No USB microphone found for audio device \"auto\""), "names the missing microphone")
        XCTAssertFalse(log.contains("Fatal error"), log)
        let status = try d.status()
        XCTAssertEqual(status["state"] as? String, "booting")
        XCTAssertNotNil(status["lastError"] as? String)
        d.signal(SIGTERM)
        XCTAssertEqual(d.waitExit(), 0)
    }
}
