// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import ShutterStorage
import XCTest

/// When the system's wall clock may date a photo.
final class SystemWallClockTests: XCTestCase {
    func testTimesyncFlagFileMakesThePlausibleClockTrusted() throws {
        let dir = try tempDir()
        let flag = dir + "/synchronized"
        let none = dir + "/absent"
        let clock = SystemWallClock(timesyncFlagPath: flag, rtcHctosysPath: none)
        let kernel = clock.kernelSaysSynchronised()
        XCTAssertEqual(clock.isTrusted, kernel, "without flag or RTC, only the kernel's NTP status counts")
        XCTAssertTrue(FileManager.default.createFile(atPath: flag, contents: Data()))
        XCTAssertTrue(clock.isTrusted)
    }

    func testRTCThatSetTheClockAtBootMakesItTrusted() throws {
        let dir = try tempDir()
        let hctosys = dir + "/hctosys"
        let clock = SystemWallClock(timesyncFlagPath: dir + "/absent", rtcHctosysPath: hctosys)
        try "0\n".write(toFile: hctosys, atomically: true, encoding: .utf8)
        XCTAssertEqual(clock.isTrusted, clock.kernelSaysSynchronised(), "an RTC that did not set the clock is no evidence")
        try "1\n".write(toFile: hctosys, atomically: true, encoding: .utf8)
        XCTAssertTrue(clock.isTrusted)
    }

    func testAClockBeforeThePlausibleFloorIsNeverTrusted() throws {
        let dir = try tempDir()
        let flag = dir + "/synchronized"
        XCTAssertTrue(FileManager.default.createFile(atPath: flag, contents: Data()))
        let clock = SystemWallClock(timesyncFlagPath: flag, rtcHctosysPath: flag, earliestPlausible: Int64.max)
        XCTAssertFalse(clock.isTrusted)
    }

    func testNowMatchesTheSystemClockAndCarriesTheLocalOffset() {
        let t = SystemWallClock().now()
        XCTAssertEqual(Double(t.secondsSinceEpoch), Date().timeIntervalSince1970, accuracy: 2)
        XCTAssertEqual(Int(t.utcOffsetSeconds), TimeZone.current.secondsFromGMT())
        XCTAssertTrue((0..<1_000_000_000).contains(t.nanoseconds))
    }

    private func tempDir() throws -> String {
        let dir = NSTemporaryDirectory() + "wallclock-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        return dir
    }
}
