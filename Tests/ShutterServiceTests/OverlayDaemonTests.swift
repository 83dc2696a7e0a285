// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// The time stamp's start in the real shutterd on the simulated board: a font that cannot be
/// opened is a configuration error naming `overlay.font` (exit 78); a good one starts, says
/// what it draws and whether the clock lets it draw the time, and photos are taken.
final class OverlayDaemonTests: XCTestCase {
    func testAMissingFontStopsTheStartNamingTheKey() throws {
        let d = try DaemonHarness(config: #"{"overlay": {"enabled": true, "font": "/nonexistent/Mono.ttf"}}"#)
        try d.start(waitReady: false)
        XCTAssertEqual(d.waitExit(), 78)
        XCTAssertTrue(d.log().contains("overlay.font is \"/nonexistent/Mono.ttf\": cannot open /nonexistent/Mono.ttf"), d.log())
        XCTAssertTrue(d.log().contains("fonts-dejavu-core"), d.log())
    }

    func testAnUnknownPositionStopsTheStartNamingTheKey() throws {
        let d = try DaemonHarness(config: #"{"overlay": {"enabled": true, "position": "centre"}}"#)
        try d.start(waitReady: false)
        XCTAssertEqual(d.waitExit(), 78)
        XCTAssertTrue(d.log().contains("overlay.position"), d.log())
    }

    func testTheStampStartsAndSaysWhatTheClockAllows() throws {
        let d = try DaemonHarness(config: #"{"overlay": {"enabled": true, "name": "Shed"}}"#)
        try d.start()
        defer { d.stop() }
        XCTAssertEqual(try d.ctl("tap").0, 0)
        let log = d.log()
        XCTAssertTrue(log.contains("time stamp on: \"%Y-%m-%d %H:%M:%S\" after \"Shed\", bottom-right"), log)
        XCTAssertTrue(log.contains("the wall clock is trusted: the time is drawn")
                      || log.contains("the wall clock is not trusted (no time sync, no RTC): no time is drawn"), log)
    }
}
