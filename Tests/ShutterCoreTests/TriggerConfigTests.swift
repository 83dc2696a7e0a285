// SPDX-License-Identifier: BSD-2-Clause
import XCTest
@testable import ShutterCore

/// `triggers.inputs`: filled in with its defaults, and a clear error at the start naming the
/// key, the entry and what is wrong.
final class TriggerConfigTests: ConfigTestCase {
    func testInputsLoadWithTheirDefaults() throws {
        let path = try write("shutter.json", """
            {"triggers": {"inputs": [
              {"name": "pir", "line": "GPIO23", "action": "clip", "clipAfterSeconds": 10, "windows": "22:00 - 06:00"},
              {"name": "door", "line": 24, "activeLow": true, "bias": "pull-up", "action": "burst", "burstCount": 4,
               "holdOffSeconds": 2.5}
            ]}}
            """)
        let c = try load(file: path)
        XCTAssertEqual(c.triggers.inputs.count, 2)
        XCTAssertEqual(c.triggers.inputs[0], .init(name: "pir", line: "GPIO23", action: .clip, clipAfterSeconds: 10,
                                                   windows: "22:00-06:00"))
        XCTAssertEqual(c.triggers.inputs[1], .init(name: "door", line: "24", activeLow: true, bias: .pullUp,
                                                   holdOffSeconds: 2.5, action: .burst, burstCount: 4))
        XCTAssertEqual(try load().triggers.inputs, [], "none by default")
    }

    func testAnUnknownActionNamesTheKeyTheEntryAndTheChoices() throws {
        let e = try error(file: #"{"triggers": {"inputs": [{"name": "pir", "line": "GPIO23", "action": "snap"}]}}"#)
        XCTAssertEqual(e.keyPath, "triggers.inputs")
        XCTAssertTrue(e.message.contains("entry 1 (\"pir\")"), e.message)
        XCTAssertTrue(e.message.contains("\"snap\"") && e.message.contains("\"photo\", \"burst\", \"clip\""), e.message)
    }

    func testALineTheButtonOrAnLEDUsesIsRefused() throws {
        // The button is GPIO17 by default: 17 is the same line.
        var e = try error(file: #"{"triggers": {"inputs": [{"name": "pir", "line": 17}]}}"#)
        XCTAssertEqual(e.keyPath, "triggers.inputs")
        XCTAssertTrue(e.message.contains("gpio.button"), e.message)
        e = try error(file: #"{"triggers": {"inputs": [{"name": "pir", "line": "GPIO27"}]}}"#)
        XCTAssertTrue(e.message.contains("gpio.statusLed"), e.message)
        e = try error(file: #"{"triggers": {"inputs": [{"name": "a", "line": 5}, {"name": "b", "line": "GPIO5"}]}}"#)
        XCTAssertTrue(e.message.contains("entry 2 (\"b\")") && e.message.contains("the input \"a\""), e.message)
    }

    func testDuplicateNamesAreRefused() throws {
        let e = try error(file: #"{"triggers": {"inputs": [{"name": "pir", "line": 5}, {"name": "pir", "line": 6}]}}"#)
        XCTAssertEqual(e.keyPath, "triggers.inputs")
        XCTAssertTrue(e.message.contains("entry 2 (\"pir\")") && e.message.contains("name"), e.message)
    }

    func testBadFieldsAreNamed() throws {
        var e = try error(file: #"{"triggers": {"inputs": [{"name": "pir", "line": 5, "windows": "25:00-06:00"}]}}"#)
        XCTAssertTrue(e.message.contains("\"windows\"") && e.message.contains("25:00-06:00"), e.message)
        e = try error(file: #"{"triggers": {"inputs": [{"name": "pir", "line": 5, "holdOffSecond": 3}]}}"#)
        XCTAssertEqual(e.code, .unknownKey)
        XCTAssertTrue(e.message.contains("did you mean \"holdOffSeconds\""), e.message)
        e = try error(file: #"{"triggers": {"inputs": [{"name": "p i r", "line": 5}]}}"#)
        XCTAssertTrue(e.message.contains("\"name\""), e.message)
        e = try error(file: #"{"triggers": {"inputs": [{"line": 5}]}}"#)
        XCTAssertTrue(e.message.contains("has no \"name\""), e.message)
        e = try error(file: #"{"triggers": {"inputs": [{"name": "b", "line": 5, "action": "burst", "burstCount": 1}]}}"#)
        XCTAssertTrue(e.message.contains("\"burstCount\": 1") && e.message.contains("2...20"), e.message)
        e = try error(file: #"{"triggers": {"inputs": {"name": "b", "line": 5}}}"#)
        XCTAssertEqual(e.code, .wrongType)
    }
}
