// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
@testable import ShutterCore

/// `overlay.*`: defaults, and a clear error naming the key for each bad value.
final class OverlayConfigTests: ConfigTestCase {
    func testDefaultsAreOffBottomRightFourPercentDejaVu() throws {
        let c = try load().overlay
        XCTAssertFalse(c.enabled)
        XCTAssertEqual(c.format, "%Y-%m-%d %H:%M:%S")
        XCTAssertEqual(c.position, .bottomRight)
        XCTAssertEqual(c.size, 4)
        XCTAssertEqual(c.name, "")
        XCTAssertEqual(c.font, "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf")
        let path = try write("ok.json", #"{"overlay": {"enabled": true, "position": "top-left", "size": 20, "name": "Shed", "format": "%d.%m.%Y %H:%M %z"}}"#)
        let set = try load(file: path).overlay
        XCTAssertEqual(set.position, .topLeft)
        XCTAssertEqual(set.size, 20)
    }

    func testBadValuesNameTheKey() throws {
        var e = try error(file: #"{"overlay": {"position": "middle"}}"#)
        XCTAssertEqual(e.code, .notAllowed)
        XCTAssertEqual(e.keyPath, "overlay.position")
        XCTAssertTrue(e.message.contains(#""top-left", "top-right", "bottom-left", "bottom-right""#), e.message)
        for size in [0, 21] {
            e = try error(file: #"{"overlay": {"size": \#(size)}}"#)
            XCTAssertEqual(e.code, .outOfRange)
            XCTAssertEqual(e.keyPath, "overlay.size")
            XCTAssertTrue(e.message.contains("1...20"), e.message)
        }
        e = try error(file: #"{"overlay": {"format": "%Y %Q"}}"#)
        XCTAssertEqual(e.keyPath, "overlay.format")
        XCTAssertTrue(e.message.contains("\"%Q\" is not a date or time conversion"), e.message)
        e = try error(file: #"{"overlay": {"format": "%H:%"}}"#)
        XCTAssertEqual(e.keyPath, "overlay.format")
        XCTAssertTrue(e.message.contains("lone"), e.message)
        e = try error(file: #"{"overlay": {"format": ""}}"#)
        XCTAssertEqual(e.keyPath, "overlay.format")
        e = try error(file: #"{"overlay": {"font": ""}}"#)
        XCTAssertEqual(e.keyPath, "overlay.font")
    }

    func testFormatRules() {
        XCTAssertNil(OverlayFormat.problem("%Y-%m-%d %H:%M:%S"))
        XCTAssertNil(OverlayFormat.problem("%Ex %OH 100%%"))
        XCTAssertNotNil(OverlayFormat.problem("%Z"))
        XCTAssertNotNil(OverlayFormat.problem("%n"))
        XCTAssertNotNil(OverlayFormat.problem(String(repeating: "x", count: 65)))
    }
}
