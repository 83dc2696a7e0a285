// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
@testable import ShutterCore

/// The sensor controls in the `camera` section (issue 11 item 1): nested keys,
/// validated like the others, layered from board files.
final class CameraConfigTests: ConfigTestCase {
    func testDefaultsAreAutomaticAndAskForNothing() throws {
        let c = try load().camera
        XCTAssertEqual(c.exposure.shutterUs, 0)
        XCTAssertEqual(c.exposure.gain, 0)
        XCTAssertEqual(c.exposure.ev, 0)
        XCTAssertEqual(c.exposure.metering, .centre)
        XCTAssertEqual(c.exposure.mode, .normal)
        XCTAssertEqual(c.exposure.flicker, .off)
        XCTAssertEqual(c.whiteBalance.mode, .auto)
        XCTAssertNil(c.whiteBalance.gains)
        XCTAssertEqual(c.focus.mode, .continuous, "continuous autofocus where the camera has it")
        XCTAssertEqual(c.focus.range, .normal)
        XCTAssertEqual(c.focus.speed, .normal)
        XCTAssertNil(c.focus.window)
        XCTAssertNil(c.exposure.window)
        XCTAssertNil(c.focus.lensPosition)
        XCTAssertEqual([c.image.brightness, c.image.contrast, c.image.saturation, c.image.sharpness], [0, 1, 1, 1])
        XCTAssertEqual(c.image.denoise, .auto)
        XCTAssertEqual(c.zoom, 1)
        XCTAssertNil(c.roi)
        XCTAssertEqual(c.hdr, .off)
        XCTAssertEqual(c.controls.requestedControls, [], "defaults ask nothing of the camera")
        XCTAssertEqual(c.controls, CameraControls())
    }

    func testEveryKeyReadsFromAFileNextToTheOlderCameraKeys() throws {
        let path = try write("shutter.json", """
        {"camera": {
          "index": 1, "model": "imx708", "afTimeoutMs": 500, "stillTimeoutMs": 15000,
          "exposure": {"shutterUs": 10000, "gain": 2, "ev": -1.5, "metering": "spot", "mode": "long",
                       "flicker": "50hz", "window": [0.1, 0.6, 0.125, 0.125]},
          "whiteBalance": {"mode": "daylight", "gains": [1.5, 2]},
          "focus": {"mode": "manual", "range": "macro", "speed": "fast", "window": [0.25, 0.25, 0.5, 0.5],
                    "lensPosition": 2},
          "image": {"brightness": -0.5, "contrast": 1.2, "saturation": 0, "sharpness": 16, "denoise": "cdn_hq"},
          "zoom": 2, "roi": [0, 0, 0.5, 0.5], "hdr": "single-exp"
        }}
        """)
        let c = try load(file: path).camera
        XCTAssertEqual([c.index, c.afTimeoutMs, c.stillTimeoutMs], [1, 500, 15000])
        XCTAssertEqual(c.model, "imx708")
        XCTAssertEqual(c.exposure.fixedShutterMicroseconds, 10_000)
        XCTAssertEqual(c.exposure.fixedGain, 2)
        XCTAssertEqual(c.exposure.ev, -1.5)
        XCTAssertEqual(c.exposure.metering, .spot)
        XCTAssertEqual(c.exposure.mode, .long)
        XCTAssertEqual(c.exposure.flicker.periodMicroseconds, 10_000)
        XCTAssertEqual(c.exposure.window, [0.1, 0.6, 0.125, 0.125])
        XCTAssertEqual(c.whiteBalance.mode, .daylight)
        XCTAssertEqual(c.whiteBalance.gains, [1.5, 2])
        XCTAssertEqual(c.focus.mode, .manual)
        XCTAssertEqual(c.focus.range, .macro)
        XCTAssertEqual(c.focus.speed, .fast)
        XCTAssertEqual(NormalisedRect(c.focus.window), NormalisedRect(x: 0.25, y: 0.25, width: 0.5, height: 0.5))
        XCTAssertEqual(c.focus.lensPosition, 2)
        XCTAssertEqual([c.image.brightness, c.image.contrast, c.image.saturation, c.image.sharpness], [-0.5, 1.2, 0, 16])
        XCTAssertEqual(c.image.denoise, .cdnHQ)
        XCTAssertEqual(c.zoom, 2)
        XCTAssertEqual(c.roi, [0, 0, 0.5, 0.5])
        XCTAssertEqual(c.hdr, .singleExp)
        XCTAssertEqual(Set(c.controls.requestedControls), Set(CameraControlID.allCases), "every control asked for")
    }

    /// Each bad value exits 78 naming the key, the file and line, and what is allowed.
    func testEachBadValueIsRefusedWithItsKeyLineAndRange() throws {
        let cases: [(json: String, key: String, code: ConfigError.Code, allowed: String)] = [
            (#""exposure": {"shutterUs": -1}"#, "camera.exposure.shutterUs", .outOfRange, "0...1000000000"),
            (#""exposure": {"shutterUs": 1.5}"#, "camera.exposure.shutterUs", .wrongType, "an integer"),
            (#""exposure": {"gain": 0.5}"#, "camera.exposure.gain", .outOfRange, "0 (automatic) or a number in 1...64"),
            (#""exposure": {"gain": 100}"#, "camera.exposure.gain", .outOfRange, "1...64"),
            (#""exposure": {"ev": 9}"#, "camera.exposure.ev", .outOfRange, "-8...8"),
            (#""exposure": {"metering": "matrix"}"#, "camera.exposure.metering", .notAllowed,
             #"one of "centre", "spot", "average""#),
            (#""exposure": {"mode": "sport"}"#, "camera.exposure.mode", .notAllowed, #""normal", "short", "long""#),
            (#""exposure": {"flicker": 50}"#, "camera.exposure.flicker", .wrongType, #""off", "50hz", "60hz", "auto""#),
            (#""whiteBalance": {"mode": "sunny"}"#, "camera.whiteBalance.mode", .notAllowed, #""daylight", "cloudy""#),
            (#""whiteBalance": {"gains": [1.5]}"#, "camera.whiteBalance.gains", .outOfRange,
             "[red, blue], each a number in 0.1...32, or null"),
            (#""whiteBalance": {"gains": [1.5, 40]}"#, "camera.whiteBalance.gains", .outOfRange, "0.1...32"),
            (#""whiteBalance": {"gains": ["1", "2"]}"#, "camera.whiteBalance.gains", .wrongType, "[red, blue]"),
            (#""focus": {"mode": "macro"}"#, "camera.focus.mode", .notAllowed, #""manual", "auto", "continuous""#),
            (#""focus": {"range": "far"}"#, "camera.focus.range", .notAllowed, #""normal", "macro", "full""#),
            (#""focus": {"speed": "slow"}"#, "camera.focus.speed", .notAllowed, #""normal", "fast""#),
            (#""focus": {"window": [0.5, 0.5, 0.6, 0.1]}"#, "camera.focus.window", .outOfRange, "x + width"),
            (#""focus": {"window": [0, 0, 0, 1]}"#, "camera.focus.window", .outOfRange, "width and height above 0"),
            (#""focus": {"lensPosition": -1}"#, "camera.focus.lensPosition", .outOfRange, "0...32 or null"),
            (#""image": {"brightness": 1.5}"#, "camera.image.brightness", .outOfRange, "-1...1"),
            (#""image": {"contrast": 33}"#, "camera.image.contrast", .outOfRange, "0...32"),
            (#""image": {"saturation": -1}"#, "camera.image.saturation", .outOfRange, "0...32"),
            (#""image": {"sharpness": 17}"#, "camera.image.sharpness", .outOfRange, "0...16"),
            (#""image": {"denoise": "on"}"#, "camera.image.denoise", .notAllowed,
             #""auto", "off", "cdn_off", "cdn_fast", "cdn_hq""#),
            (#""zoom": 0.5"#, "camera.zoom", .outOfRange, "1...8"),
            (#""zoom": 9"#, "camera.zoom", .outOfRange, "1...8"),
            (#""roi": [0.5, 0.5, 0.5]"#, "camera.roi", .outOfRange, "[x, y, width, height]"),
            (#""roi": "centre""#, "camera.roi", .wrongType, "[x, y, width, height]"),
            (#""hdr": true"#, "camera.hdr", .wrongType, #""off", "auto", "sensor", "single-exp""#),
            (#""hdr": "on""#, "camera.hdr", .notAllowed, #""off", "auto", "sensor", "single-exp""#),
        ]
        for c in cases {
            // The bad key on line 3 of the file.
            let e = try error(file: "{\n\"camera\": {\n\(c.json)\n}}")
            XCTAssertEqual(e.keyPath, c.key, c.json)
            XCTAssertEqual(e.code, c.code, "\(c.json): \(e)")
            XCTAssertTrue(e.source.hasSuffix("shutter.json line 3"), "\(c.json): \(e.source)")
            XCTAssertTrue(e.message.contains(c.key), "\(c.json): \(e.message)")
            XCTAssertTrue(e.message.contains(c.allowed), "\(c.json): \(e.message)")
        }
    }

    func testUnknownNestedKeysAndGroupsOfTheWrongType() throws {
        var e = try error(file: "{\"camera\": {\n\"exposure\": {\"shuterUs\": 100}}}")
        XCTAssertEqual(e.code, .unknownKey)
        XCTAssertEqual(e.keyPath, "camera.exposure.shuterUs")
        XCTAssertTrue(e.message.contains(#"did you mean "camera.exposure.shutterUs""#), e.message)
        XCTAssertTrue(e.source.hasSuffix("shutter.json line 2"), e.source)

        e = try error(file: #"{"camera": {"focus": "auto"}}"#)
        XCTAssertEqual(e.code, .wrongType)
        XCTAssertEqual(e.keyPath, "camera.focus")
        XCTAssertTrue(e.message.contains("must be an object of keys"), e.message)

        e = try error(file: #"{"camera": {"whitebalance": {"mode": "daylight"}}}"#)
        XCTAssertEqual(e.code, .unknownKey)
        XCTAssertTrue(e.message.contains("camera.whiteBalance"), e.message)
    }

    func testCommandLineValuesForNumbersListsAndNull() throws {
        var c = try load(overrides: ["camera.whiteBalance.gains": "1.5,2", "camera.focus.window": "[0.4, 0.4, 0.2, 0.2]",
                                     "camera.exposure.gain": "0", "camera.zoom": "2.5", "camera.roi": "null"])
        XCTAssertEqual(c.camera.whiteBalance.gains, [1.5, 2])
        XCTAssertEqual(c.camera.focus.window, [0.4, 0.4, 0.2, 0.2])
        XCTAssertNil(c.camera.exposure.fixedGain)
        XCTAssertEqual(c.camera.zoom, 2.5)
        XCTAssertNil(c.camera.roi)
        c = try load(overrides: ["camera.whiteBalance.gains": "[1.8, 1.2]"])
        XCTAssertEqual(c.camera.whiteBalance.gains, [1.8, 1.2])
        var e = try error { _ = try self.load(overrides: ["camera.exposure.gain": "0.5"]) }
        XCTAssertEqual(e.code, .outOfRange)
        XCTAssertEqual(e.source, "command line (camera.exposure.gain=0.5)")
        e = try error { _ = try self.load(overrides: ["camera.whiteBalance.gains": "red"]) }
        XCTAssertEqual(e.code, .wrongType)
        e = try error { _ = try self.load(overrides: ["camera.focus.window": "0.5,0.5,0.6,0.6"]) }
        XCTAssertEqual(e.code, .outOfRange)
    }

    /// A board file sets camera defaults; the config file changes one nested key
    /// and keeps the board's others (groups merge key by key).
    func testBoardFileCameraDefaultsMergeKeyByKey() throws {
        try write("boards/fixedfocus.json", """
        {"camera": {"focus": {"mode": "manual", "lensPosition": 0.5},
                    "exposure": {"ev": 0.5, "flicker": "60hz"}, "image": {"denoise": "cdn_fast"}}}
        """)
        let file = try write("shutter.json", """
        {"board": {"name": "fixedfocus"}, "camera": {"exposure": {"metering": "average"}, "focus": {"lensPosition": null}}}
        """)
        let c = try load(file: file).camera
        XCTAssertEqual(c.exposure.ev, 0.5, "the board's value stays")
        XCTAssertEqual(c.exposure.flicker, .hz60)
        XCTAssertEqual(c.exposure.metering, .average, "the file's value is added")
        XCTAssertEqual(c.focus.mode, .manual)
        XCTAssertNil(c.focus.lensPosition, "null in the file clears the board's value")
        XCTAssertEqual(c.image.denoise, .cdnFast)
        XCTAssertEqual(c.image.contrast, 1, "defaults fill the rest")

        try write("boards/badcam.json", "{\"camera\": {\n\"zoom\": 10}}")
        let e = try error { _ = try self.load(detected: "badcam") }
        XCTAssertEqual(e.keyPath, "camera.zoom")
        XCTAssertTrue(e.source.hasPrefix("board file \(boardsDir)/badcam.json line 2"), e.source)
    }

    func testPrintConfigShowsAndRoundTripsTheNestedKeys() throws {
        let c = try load(overrides: ["camera.whiteBalance.gains": "1.5,2", "camera.exposure.ev": "1",
                                     "camera.hdr": "auto", "camera.focus.range": "full"])
        let text = c.printable()
        XCTAssertTrue(text.contains("\"roi\": null"), "unset values are shown")
        XCTAssertTrue(text.contains("\"lensPosition\": null"))
        XCTAssertTrue(text.contains("\"hdr\": \"auto\""))
        let path = try write("printed.json", text)
        XCTAssertEqual(try load(file: path), c)
    }
}
