// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
@testable import ShutterCore

/// Temp directories and helpers shared by the configuration tests.
class ConfigTestCase: XCTestCase {
    var dir = ""
    var boardsDir: String { dir + "/boards" }

    /// The repository's boards/ directory.
    static let repoBoards = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("boards").path

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "shutter-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: boardsDir, withIntermediateDirectories: true)
        try write("boards/sim.json", #"{"board": {"name": "sim"}}"#)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: dir)
    }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        let path = dir + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func load(file: String? = nil, overrides: [String: String] = [:], detected: String? = nil) throws -> ShutterConfig {
        try ConfigLoader.load(configFile: file, defaultConfigFile: nil, overrides: overrides,
                              detectedBoard: detected, boardSearchPath: [boardsDir])
    }

    /// Loads a config file with `text` and returns the error it must raise.
    func error(file text: String, file: StaticString = #filePath, line: UInt = #line) throws -> ConfigError {
        let path = try write("shutter.json", text)
        return try error(file: file, line: line) { _ = try self.load(file: path) }
    }

    func error(file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) throws -> ConfigError {
        do {
            try body()
        } catch let e as ConfigError {
            XCTAssertEqual(e.exitCode, 78, file: file, line: line)
            return e
        }
        XCTFail("expected a ConfigError", file: file, line: line)
        throw XCTSkip("no error")
    }
}

final class ConfigDefaultsTests: ConfigTestCase {
    func testFixedKeysHaveTheirSpecifiedDefaults() throws {
        let c = try load()
        XCTAssertEqual(c.button.stabilityMs, 20)
        XCTAssertEqual(c.button.holdMs, 1000)
        XCTAssertEqual(c.button.doubleTapMs, 0)
        XCTAssertTrue(c.button.activeLow)
        XCTAssertEqual(c.video.maxSeconds, 60)
        XCTAssertEqual(c.video.segmentSeconds, 0)
        XCTAssertEqual(c.shutdown.taps, 3)
        XCTAssertEqual(c.shutdown.gapMs, 400)
        XCTAssertEqual(c.shutdown.countdownMs, 3000)
        XCTAssertEqual(c.video.keyframeIntervalMs, 1000)
        XCTAssertEqual(c.video.prerollSeconds, 0, "pre-roll is off unless asked for")
        XCTAssertEqual(c.still.quality, 93)
        XCTAssertEqual(c.audio.sampleRate, 48000)
        XCTAssertEqual(c.flash.mode, .auto)
        XCTAssertEqual(c.camera.afTimeoutMs, 300)
        XCTAssertEqual(c.storage.lowSpacePolicy, .refuse)
        XCTAssertEqual(c.gpio.button, "GPIO17")
        XCTAssertEqual(c.gpio.statusLed, "GPIO27")
        XCTAssertEqual(c.gpio.flashLed, "GPIO22")
        XCTAssertEqual(c.board.name, "sim")
        XCTAssertEqual(c, ShutterConfig(), "the minimal sim board changes nothing")
    }

    /// The schema table and the Swift struct must list the same keys, or a
    /// key would be unsettable (or unvalidated).
    func testSchemaListsExactlyTheConfigKeys() {
        let structKeys = Set(ShutterConfig().tree().leaves().map(\.path))
        XCTAssertEqual(structKeys, Set(ConfigSchema.keys.map(\.path)))
        XCTAssertEqual(ConfigSchema.keys.count, ConfigSchema.byPath.count, "no duplicate paths")
    }

    func testDefaultsPassTheirOwnValidation() throws {
        var raw = try JSONParser.parse(String(decoding: try JSONEncoder().encode(ShutterConfig()), as: UTF8.self)).value
        raw.setValue(.null, at: "exif.fNumber")
        XCTAssertNoThrow(try ConfigSchema.validate(layer: raw))
    }
}

final class ConfigValidationTests: ConfigTestCase {
    func testUnknownSectionSuggestsTheClosest() throws {
        let e = try error(file: "{\n  \"buton\": {\"holdMs\": 900}\n}")
        XCTAssertEqual(e.code, .unknownKey)
        XCTAssertEqual(e.keyPath, "buton")
        XCTAssertTrue(e.message.contains("did you mean \"button\""), e.message)
        XCTAssertTrue(e.source.contains("shutter.json line 2"), e.source)
    }

    func testUnknownNestedKeyNamesPathFileLineAndSuggestion() throws {
        let e = try error(file: """
        {
          "button": {
            "stabilityMs": 20,
            "holdMS": 900
          }
        }
        """)
        XCTAssertEqual(e.code, .unknownKey)
        XCTAssertEqual(e.keyPath, "button.holdMS")
        XCTAssertTrue(e.message.contains("did you mean \"button.holdMs\""), e.message)
        XCTAssertTrue(e.source.hasPrefix("config file \(dir)/shutter.json line 4"), e.source)
        XCTAssertTrue(e.description.contains("button.holdMS"))
    }

    func testUnknownKeyFarFromAnyListsTheSectionKeys() throws {
        let e = try error(file: #"{"flash": {"brightnessPercent": 5}}"#)
        XCTAssertEqual(e.code, .unknownKey)
        XCTAssertTrue(e.message.contains("flash.mode, flash.autoLux"), e.message)
    }

    func testWrongTypes() throws {
        var e = try error(file: #"{"button": {"holdMs": "1000"}}"#)
        XCTAssertEqual(e.code, .wrongType)
        XCTAssertEqual(e.keyPath, "button.holdMs")
        XCTAssertTrue(e.message.contains("an integer in 100...10000, not a string"), e.message)

        e = try error(file: #"{"button": {"holdMs": 1000.5}}"#)
        XCTAssertEqual(e.code, .wrongType, "a fraction is not an integer")

        e = try error(file: #"{"video": {"torch": 1}}"#)
        XCTAssertEqual(e.code, .wrongType)
        XCTAssertTrue(e.message.contains("true or false"), e.message)

        e = try error(file: #"{"video": 5}"#)
        XCTAssertEqual(e.code, .wrongType)
        XCTAssertEqual(e.keyPath, "video")

        e = try error(file: #"[1, 2]"#)
        XCTAssertEqual(e.code, .wrongType)
    }

    func testOutOfRangeNamesTheRange() throws {
        var e = try error(file: #"{"button": {"holdMs": 50}}"#)
        XCTAssertEqual(e.code, .outOfRange)
        XCTAssertTrue(e.message.contains("100...10000"), e.message)
        e = try error(file: #"{"video": {"width": 1921}}"#)
        XCTAssertEqual(e.code, .outOfRange)
        XCTAssertTrue(e.message.contains("even"), e.message)
        e = try error(file: #"{"exif": {"fNumber": 0.1}}"#)
        XCTAssertEqual(e.code, .outOfRange)
        XCTAssertTrue(e.message.contains("0.5...64"), e.message)
        e = try error(file: #"{"audio": {"device": ""}}"#)
        XCTAssertEqual(e.code, .outOfRange)
        e = try error(file: #"{"video": {"prerollSeconds": 31}}"#)
        XCTAssertEqual(e.code, .outOfRange)
        XCTAssertTrue(e.message.contains("video.prerollSeconds") && e.message.contains("0...30"), e.message)
        e = try error(file: #"{"sim": {"sceneKelvin": 20000}}"#)
        XCTAssertEqual(e.code, .outOfRange)
        XCTAssertTrue(e.message.contains("sim.sceneKelvin") && e.message.contains("1500...12000"), e.message)
        e = try error(file: #"{"sim": {"subjectDioptres": -1}}"#)
        XCTAssertEqual(e.code, .outOfRange)
        let sim = try load(file: write("sim.json", #"{"sim": {"sceneLux": 50, "sceneKelvin": 3000, "subjectDioptres": 4}}"#)).sim
        XCTAssertEqual([sim.sceneLux, Double(sim.sceneKelvin), sim.subjectDioptres], [50, 3000, 4])
        // Bounds themselves are allowed.
        XCTAssertEqual(try load(overrides: ["button.holdMs": "100", "video.maxSeconds": "3600"]).button.holdMs, 100)
    }

    func testBadEnumValuesListTheChoices() throws {
        var e = try error(file: #"{"flash": {"mode": "sometimes"}}"#)
        XCTAssertEqual(e.code, .notAllowed)
        XCTAssertTrue(e.message.contains(#"one of "off", "on", "auto""#), e.message)
        e = try error(file: #"{"storage": {"lowSpacePolicy": "delete-oldest-video"}}"#)
        XCTAssertEqual(e.code, .notAllowed)
        XCTAssertTrue(e.message.contains(#"did you mean "delete-oldest-videos""#), e.message)
        e = try error(file: #"{"camera": {"rotation": 90}}"#)
        XCTAssertEqual(e.code, .notAllowed)
        XCTAssertTrue(e.message.contains("one of 0, 180"), e.message)
        e = try error(file: #"{"video": {"encoder": "h264_omx"}}"#)
        XCTAssertEqual(e.code, .notAllowed)
    }

    func testInvalidJSONGivesLineAndColumn() throws {
        let e = try error(file: "{\n  \"button\": {\"holdMs\": 900,},\n}")
        XCTAssertEqual(e.code, .invalidJSON)
        XCTAssertTrue(e.source.hasSuffix("shutter.json line 2 column 28"), e.source)
        let dup = try error(file: #"{"button": {"holdMs": 900, "holdMs": 800}}"#)
        XCTAssertEqual(dup.code, .invalidJSON)
        XCTAssertTrue(dup.message.contains("duplicate key \"button.holdMs\""), dup.message)
        XCTAssertEqual(try error(file: "").code, .invalidJSON)
        XCTAssertEqual(try error(file: "{} {}").code, .invalidJSON)
    }

    func testMissingAndUnreadableFiles() throws {
        var e = try error { _ = try self.load(file: self.dir + "/nope.json") }
        XCTAssertEqual(e.code, .fileMissing)
        XCTAssertTrue(e.source.contains("nope.json"))
        e = try error { _ = try self.load(file: self.boardsDir) }
        XCTAssertEqual(e.code, .fileUnreadable)
        // The default system file is optional: absent means defaults.
        XCTAssertEqual(try ConfigLoader.load(defaultConfigFile: dir + "/absent.json", boardSearchPath: [boardsDir]),
                       ShutterConfig())
    }

    func testCommandLineOverridesAreTypedAndChecked() throws {
        var e = try error { _ = try self.load(overrides: ["button.holdMs": "long"]) }
        XCTAssertEqual(e.code, .wrongType)
        XCTAssertEqual(e.source, "command line (button.holdMs=long)")
        e = try error { _ = try self.load(overrides: ["storage.rot": "/x"]) }
        XCTAssertEqual(e.code, .unknownKey)
        XCTAssertTrue(e.message.contains("did you mean \"storage.root\""), e.message)
        e = try error { _ = try self.load(overrides: ["video.torch": "maybe"]) }
        XCTAssertEqual(e.code, .wrongType)
        let c = try load(overrides: ["video.torch": "yes", "flash.autoLux": "12.5", "gpio.flashLed": "",
                                     "storage.lowSpacePolicy": "delete-oldest-videos", "exif.focalLengthMm": "4.74"])
        XCTAssertTrue(c.video.torch)
        XCTAssertEqual(c.flash.autoLux, 12.5)
        XCTAssertEqual(c.gpio.flashLed, "")
        XCTAssertEqual(c.storage.lowSpacePolicy, .deleteOldestVideos)
        XCTAssertEqual(c.exif.focalLengthMm, 4.74)
    }

    func testGPIOOffsetsBecomeStrings() throws {
        let path = try write("shutter.json", #"{"gpio": {"button": 17, "statusLed": "GPIO5"}}"#)
        let c = try load(file: path)
        XCTAssertEqual(c.gpio.button, "17")
        XCTAssertEqual(c.gpio.statusLed, "GPIO5")
    }

    func testCrossKeyRuleNamesTheSourceOfTheBadKey() throws {
        let path = try write("shutter.json", "{\n\"video\": {\n\"maxSeconds\": 30,\n\"segmentSeconds\": 40}}")
        let e = try error { _ = try self.load(file: path) }
        XCTAssertEqual(e.keyPath, "video.segmentSeconds")
        XCTAssertTrue(e.source.hasSuffix("shutter.json line 4"), e.source)
        XCTAssertTrue(e.message.contains("video.maxSeconds (30)"), e.message)
    }
}

final class ConfigLayeringTests: ConfigTestCase {
    func testDefaultsThenBoardThenFileThenCommandLine() throws {
        try write("boards/testboard.json", """
        {"board": {"name": "testboard"}, "button": {"holdMs": 1500},
         "video": {"fps": 25}, "still": {"quality": 80}, "exif": {"fNumber": 1.8}}
        """)
        let file = try write("shutter.json", """
        {"board": {"name": "testboard"}, "button": {"holdMs": 1200}, "video": {"fps": 24},
         "exif": {"fNumber": null}}
        """)
        let c = try load(file: file, overrides: ["button.holdMs": "900"])
        XCTAssertEqual(c.button.holdMs, 900, "command line wins")
        XCTAssertEqual(c.video.fps, 24, "config file over board")
        XCTAssertEqual(c.still.quality, 80, "board over defaults")
        XCTAssertEqual(c.button.stabilityMs, 20, "defaults fill the rest")
        XCTAssertNil(c.exif.fNumber, "null in the config file clears the board's value")
        XCTAssertEqual(c.board.name, "testboard")
        XCTAssertEqual(try load(file: file).button.holdMs, 1200)
    }

    /// The shipped board files load, the Pi boards take the first USB microphone ("auto":
    /// ALSA's default on Pi OS Lite is card 0, which cannot capture), and the emulated
    /// board says how it differs from a Pi in `board.notes`, not in its logged description.
    func testShippedBoardFiles() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        for name in ["qemu", "rpi3", "rpi4", "rpi5", "zero2w"] {
            let text = try String(contentsOf: repo.appendingPathComponent("boards/\(name).json"), encoding: .utf8)
            try write("boards/\(name).json", text)
            let c = try load(file: try write("shutter-\(name).json", #"{"board": {"name": "\#(name)"}}"#))
            XCTAssertEqual(c.board.name, name)
            if name == "qemu" {
                XCTAssertEqual(c.audio.device, "hw:Loopback,1,0")
                XCTAssertTrue(c.board.notes.contains("pinctrl-bcm2711") && c.board.notes.contains("linux,dummy-virt"), c.board.notes)
                XCTAssertFalse(c.board.description.contains("dummy-virt"), "the description is logged and in STATUS=: short")
                XCTAssertTrue(c.printable().contains(#""notes": "make hil (x86_64)"#), "--print-config shows the notes")
            } else {
                XCTAssertEqual(c.audio.device, "auto", name)
                XCTAssertEqual(c.board.notes, "", name)
            }
        }
    }

    func testBoardChoiceOrder() throws {
        try write("boards/a.json", #"{"still": {"quality": 10}}"#)
        try write("boards/b.json", #"{"still": {"quality": 20}}"#)
        try write("boards/c.json", #"{"still": {"quality": 30}}"#)
        let file = try write("shutter.json", #"{"board": {"name": "b"}}"#)
        XCTAssertEqual(try load(file: file, overrides: ["board.name": "a"], detected: "c").still.quality, 10)
        XCTAssertEqual(try load(file: file, detected: "c").still.quality, 20)
        XCTAssertEqual(try load(detected: "c").still.quality, 30)
        XCTAssertEqual(try load().board.name, "sim")
    }

    func testUnknownBoardListsKnownOnes() throws {
        try write("boards/rpi5.json", #"{}"#)
        let e = try error { _ = try self.load(overrides: ["board.name": "rpi6"]) }
        XCTAssertEqual(e.code, .boardNotFound)
        XCTAssertTrue(e.message.contains("known boards: rpi5, sim"), e.message)
        XCTAssertTrue(e.message.contains("did you mean \"rpi5\""), e.message)
        let bad = try error { _ = try self.load(overrides: ["board.name": "../etc/passwd"]) }
        XCTAssertEqual(bad.code, .notAllowed)
    }

    func testBoardFileErrorsNameTheBoardFile() throws {
        try write("boards/x.json", "{\n \"video\": {\"fps\": 500}}")
        let e = try error { _ = try self.load(detected: "x") }
        XCTAssertEqual(e.code, .outOfRange)
        XCTAssertTrue(e.source.hasPrefix("board file \(boardsDir)/x.json line 2"), e.source)
    }

    func testPrintConfigRoundTrips() throws {
        var custom = try load(overrides: ["button.holdMs": "800", "flash.autoLux": "12.25",
                                          "exif.fNumber": "2.8", "storage.root": "/media/card \"1\""])
        custom.audio.enabled = false
        let text = custom.printable()
        XCTAssertTrue(text.contains("\"holdMs\": 800"), text)
        XCTAssertTrue(text.contains("\"focalLengthMm\": null"), "unknown optionals are shown")
        XCTAssertTrue(text.hasSuffix("}\n"))
        // Sections appear sorted.
        let order = ["audio", "board", "button", "camera", "control", "exif", "flash", "gpio",
                     "shutdown", "still", "storage", "video", "watchdog"].map { text.range(of: "\"\($0)\": {")!.lowerBound }
        XCTAssertEqual(order, order.sorted())
        let path = try write("printed.json", text)
        XCTAssertEqual(try load(file: path), custom)
        XCTAssertEqual(try load(file: path).printable(), text)
    }

    func testBoardSearchPathOrder() {
        let p = BoardProfile.searchPath(explicit: "/opt/b", environment: ["SHUTTER_BOARDS_DIR": "/env/b"])
        XCTAssertEqual(Array(p.prefix(4)), ["/opt/b", "/env/b", "/usr/share/shutter/boards", "./boards"])
        let plain = BoardProfile.searchPath(environment: [:])
        XCTAssertEqual(Array(plain.prefix(2)), ["/usr/share/shutter/boards", "./boards"])
        // Then beside the executable, so a build tree's boards/ is found from any directory.
        XCTAssertTrue(plain.dropFirst(2).allSatisfy { $0.hasSuffix("/boards") }, "\(plain)")
    }
}

/// The shipped boards/*.json files.
final class ConfigBoardFilesTests: XCTestCase {
    func load(_ name: String) throws -> ShutterConfig {
        try ConfigLoader.load(defaultConfigFile: nil, detectedBoard: name, boardSearchPath: [ConfigTestCase.repoBoards])
    }

    func testEveryShippedBoardLoads() throws {
        XCTAssertEqual(BoardProfile.available(in: ConfigTestCase.repoBoards),
                       ["qemu", "rpi3", "rpi4", "rpi5", "sim", "zero2w"])
        let expected: [String: (String, ShutterConfig.Video.Encoder)] = [
            "rpi5": ("pinctrl-rp1", .libx264), "rpi4": ("pinctrl-bcm2711", .h264V4L2M2M),
            "rpi3": ("pinctrl-bcm2835", .h264V4L2M2M), "zero2w": ("pinctrl-bcm2835", .h264V4L2M2M),
            "qemu": ("pinctrl-bcm2711", .libx264), "sim": ("", .libx264),
        ]
        for (name, (chip, encoder)) in expected {
            let c = try load(name)
            XCTAssertEqual(c.board.name, name)
            XCTAssertEqual(c.gpio.chipLabel, chip, name)
            XCTAssertEqual(c.video.encoder, encoder, name)
            XCTAssertEqual(c.gpio.button, "GPIO17", name)
            XCTAssertEqual(c.gpio.buttonBias, .pullUp, name)
            XCTAssertEqual(c.gpio.statusLed, "GPIO27", name)
            XCTAssertEqual(c.gpio.flashLed, "GPIO22", name)
            XCTAssertFalse(c.board.description.isEmpty, name)
        }
    }

    func testQemuIsSmallAndPiHasCameraModule3Optics() throws {
        let q = try load("qemu")
        XCTAssertEqual([q.video.width, q.video.height, q.video.fps], [640, 480, 10])
        XCTAssertEqual([q.still.width, q.still.height], [1920, 1080])
        let p = try load("rpi5")
        XCTAssertEqual(p.exif.focalLengthMm, 4.74)
        XCTAssertEqual(p.exif.fNumber, 1.8)
        XCTAssertEqual([p.still.width, p.still.height], [4608, 2592])
        XCTAssertEqual(try load("sim").storage.root, "./shutter-data")
    }
}

final class ConfigJSONParserTests: XCTestCase {
    func testParsesEscapesNumbersAndKeyLines() throws {
        let doc = try JSONParser.parse("{\n \"a\": {\n  \"b\": \"x\\u00e9\\ud83d\\ude00\\n\",\n  \"c\": -1.5e2, \"d\": 0, \"e\": [true, null]\n }\n}")
        XCTAssertEqual(doc.value.value(at: "a.b"), .string("xé😀\n"))
        XCTAssertEqual(doc.value.value(at: "a.c"), .double(-150))
        XCTAssertEqual(doc.value.value(at: "a.d"), .int(0))
        XCTAssertEqual(doc.value.value(at: "a.e"), .array([.bool(true), .null]))
        XCTAssertEqual(doc.keyLines["a"], 2)
        XCTAssertEqual(doc.keyLines["a.b"], 3)
        XCTAssertEqual(doc.keyLines["a.e"], 4)
        XCTAssertEqual(try JSONParser.parse(doc.value.rendered(pretty: false)).value, doc.value)
    }

    func testRejectsMalformedInput() {
        for bad in ["{", "{\"a\" 1}", "[1,]", "01", "1.", "\"abc", "\"a\nb\"", "tru", "{\"a\":1,}", "\"\\x\""] {
            XCTAssertThrowsError(try JSONParser.parse(bad), bad)
        }
    }
}
