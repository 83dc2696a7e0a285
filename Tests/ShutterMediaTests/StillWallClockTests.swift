import Foundation
import ShutterCore
import XCTest

/// When the wall clock may date a photo.
final class StillWallClockTests: XCTestCase {
    func testTimesyncFlagFileMakesThePlausibleClockTrusted() throws {
        let dir = try StillTools.tempDir(self)
        let flag = dir + "/synchronized"
        let none = dir + "/absent"
        let clock = SystemWallClock(timesyncFlagPath: flag, rtcHctosysPath: none)
        let kernel = clock.kernelSaysSynchronised()
        XCTAssertEqual(clock.isTrusted, kernel, "without flag or RTC, only the kernel's NTP status counts")
        XCTAssertTrue(FileManager.default.createFile(atPath: flag, contents: Data()))
        XCTAssertTrue(clock.isTrusted)
    }

    func testRTCThatSetTheClockAtBootMakesItTrusted() throws {
        let dir = try StillTools.tempDir(self)
        let hctosys = dir + "/hctosys"
        let clock = SystemWallClock(timesyncFlagPath: dir + "/absent", rtcHctosysPath: hctosys)
        try "0\n".write(toFile: hctosys, atomically: true, encoding: .utf8)
        XCTAssertEqual(clock.isTrusted, clock.kernelSaysSynchronised(), "an RTC that did not set the clock is no evidence")
        try "1\n".write(toFile: hctosys, atomically: true, encoding: .utf8)
        XCTAssertTrue(clock.isTrusted)
    }

    func testAClockBeforeThePlausibleFloorIsNeverTrusted() throws {
        let dir = try StillTools.tempDir(self)
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

    func testWallTimeOfAnEarlierMonotonicInstant() {
        let wall = FixedWallClock(WallTime(secondsSinceEpoch: 1000, nanoseconds: 100_000_000, isTrusted: true))
        let mono = ManualClock(start: .milliseconds(5000))
        let t = wall.wallTime(at: .milliseconds(4700), monotonic: mono)  // 300 ms ago
        XCTAssertEqual(t.secondsSinceEpoch, 999)
        XCTAssertEqual(t.nanoseconds, 800_000_000)
        XCTAssertTrue(t.isTrusted)
    }
}
