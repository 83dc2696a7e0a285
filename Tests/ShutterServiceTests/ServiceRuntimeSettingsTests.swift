// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
import ShutterSim
import ShutterStorage
@testable import ShutterService

/// Issue 11 item 2: settings changed while the service runs (`set`, `get`,
/// `reset`), applied between captures, remembered in the state file, and the
/// configuration reread on SIGHUP. In this process, on the simulated board, on the
/// manual clock (InProcessRig).
final class ServiceRuntimeSettingsTests: XCTestCase {
    /// The service in this process on the manual clock (InProcessRig), as these tests use it.
    private struct Rig {
        let rig: InProcessRig
        var service: CameraService { rig.service }
        /// The camera in use (a restart for other sizes opens a new one).
        var camera: SimCamera { rig.board.camera }
        var signals: Signals { rig.signals }

        func ask(_ cmd: String, _ key: String? = nil, _ value: JSONValue? = nil, file: StaticString = #filePath,
                 line: UInt = #line) async -> ControlReply {
            do {
                return try await rig.ask(ControlRequest(cmd: cmd, key: key, value: value), file: file, line: line)
            } catch {
                return ControlReply(ok: false, error: "no answer: \(error)")
            }
        }

        func handle(_ request: ControlRequest) async -> ControlReply {
            (try? await rig.ask(request)) ?? ControlReply(ok: false, error: "no answer")
        }

        func stop() async {
            let code = try? await rig.stop()
            XCTAssertEqual(code, 0)
        }
    }

    private static func config(root: String? = nil, _ edit: (inout ShutterConfig) -> Void = { _ in }) throws -> ShutterConfig {
        var c = ShutterConfig()
        c.storage.root = try root ?? DaemonHarness.makeTempDir()
        c.video.width = 320
        c.video.height = 240
        c.still.width = 640
        c.still.height = 480
        c.video.preset = "ultrafast"
        c.audio.enabled = false
        c.sim.modeSwitchMs = 0
        edit(&c)
        return c
    }

    private func start(_ config: ShutterConfig,
                       reload: (@Sendable () throws(ConfigError) -> ShutterConfig)? = nil) async throws -> Rig {
        Rig(rig: try await InProcessRig.start(self, config: config, reload: reload))
    }

    func testSetReachesTheCameraGetShowsItAndResetReturnsToTheConfig() async throws {
        let r = try await start(try Self.config { $0.camera.exposure.ev = 0.5 })

        let set = await r.ask("set", "camera.exposure.ev", .int(2))
        XCTAssertTrue(set.ok, "\(set)")
        XCTAssertEqual(set.value, .double(2))
        XCTAssertEqual(set.source, "runtime")
        XCTAssertEqual(r.camera.controlReport.asked.exposure.ev, 2, "the running camera got it")
        XCTAssertEqual(set.effective, .double(2), "what the camera now has")
        XCTAssertNil(set.note, "applied at once: nothing to add")

        let got = await r.ask("get", "camera.exposure.ev")
        XCTAssertEqual(got.key, "camera.exposure.ev")
        XCTAssertEqual(got.value, .double(2))
        XCTAssertEqual(got.source, "runtime")

        // Arrays and null travel as JSON; a choice.
        let gains = await r.ask("set", "camera.whiteBalance.gains", .array([.double(1.5), .int(2)]))
        XCTAssertTrue(gains.ok, "\(gains)")
        XCTAssertEqual(r.camera.controlReport.asked.whiteBalance.gains, [1.5, 2])
        let noGains = await r.ask("set", "camera.whiteBalance.gains", .null)
        XCTAssertTrue(noGains.ok)
        XCTAssertNil(r.camera.controlReport.asked.whiteBalance.gains)
        let daylight = await r.ask("set", "camera.whiteBalance.mode", .string("daylight"))
        XCTAssertTrue(daylight.ok)
        XCTAssertEqual(r.camera.controlReport.asked.whiteBalance.mode, .daylight)

        // flash.mode reaches the machine (as a double tap would), video.torch its configuration.
        let flashOn = await r.ask("set", "flash.mode", .string("on"))
        XCTAssertTrue(flashOn.ok)
        let flash = await r.service.status().flashMode
        XCTAssertEqual(flash, "on")
        let torch = await r.ask("set", "video.torch", .bool(true))
        XCTAssertEqual(torch.effective, .bool(true))

        // get without a key: every settable key, where each value comes from.
        let getAll = await r.ask("get")
        let all = try XCTUnwrap(getAll.settings)
        XCTAssertEqual(all.map(\.key), RuntimeSettings.settableKeys)
        XCTAssertEqual(Set(all.filter { $0.source == "runtime" }.map(\.key)),
                       ["camera.exposure.ev", "camera.whiteBalance.gains", "camera.whiteBalance.mode", "flash.mode", "video.torch"])

        // reset KEY: back to the config file's value, on the camera too.
        let reset = await r.ask("reset", "camera.exposure.ev")
        XCTAssertTrue(reset.ok, "\(reset)")
        XCTAssertEqual(reset.value, .double(0.5))
        XCTAssertEqual(reset.source, "config")
        XCTAssertEqual(r.camera.controlReport.asked.exposure.ev, 0.5)
        XCTAssertEqual(r.camera.controlReport.asked.whiteBalance.mode, .daylight, "other changes stay")

        // reset: every runtime change.
        let resetAll = await r.ask("reset")
        XCTAssertEqual(Set(resetAll.settings?.map(\.key) ?? []),
                       ["camera.whiteBalance.gains", "camera.whiteBalance.mode", "flash.mode", "video.torch"])
        XCTAssertEqual(r.camera.controlReport.asked, try Self.config { $0.camera.exposure.ev = 0.5 }.camera.controls)
        let flashAfter = await r.service.status().flashMode
        XCTAssertEqual(flashAfter, "auto")
        let torchAfter = await r.ask("get", "video.torch")
        XCTAssertEqual(torchAfter.effective, .bool(false))
        await r.stop()
    }

    func testABadKeyOrValueIsRefusedAsTheConfigFileWouldBeAndNothingChanges() async throws {
        let r = try await start(try Self.config())
        let changesBefore = r.camera.controlChanges

        let typo = await r.ask("set", "camera.exposure.evv", .int(2))
        XCTAssertFalse(typo.ok)
        XCTAssertTrue(typo.error?.contains(#"unknown key "camera.exposure.evv" (did you mean "camera.exposure.ev"?)"#) == true,
                      typo.error ?? "")

        let big = await r.ask("set", "camera.exposure.ev", .int(9))
        XCTAssertFalse(big.ok)
        XCTAssertTrue(big.error?.contains(#""camera.exposure.ev" is 9; allowed: a number in -8...8"#) == true, big.error ?? "")
        // The config file's wording, word for word: one check for both.
        let file = NSTemporaryDirectory() + "shutter-bad-\(UUID().uuidString).json"
        try #"{"camera": {"exposure": {"ev": 9}}}"#.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        do throws(ConfigError) {
            _ = try ConfigLoader.load(configFile: file, defaultConfigFile: nil, requireBoardFile: false)
            XCTFail("the config loader took ev 9")
        } catch {
            XCTAssertTrue(big.error?.hasSuffix(error.message) == true, "\(big.error ?? "") vs \(error.message)")
        }

        let gains = await r.ask("set", "camera.whiteBalance.gains", .array([.int(1)]))
        XCTAssertTrue(gains.error?.contains(#""camera.whiteBalance.gains" is [1]; allowed: [red, blue], each a number in 0.1...32, or null"#) == true,
                      gains.error ?? "")
        let word = await r.ask("set", "camera.exposure.metering", .string("matrix"))
        XCTAssertTrue(word.error?.contains(#"allowed: one of "centre", "spot", "average""#) == true, word.error ?? "")
        let size = await r.ask("set", "video.width", .int(640))
        XCTAssertTrue(size.error?.contains(#""video.width" cannot change while shutterd runs"#) == true, size.error ?? "")
        let get = await r.ask("get", "camera.exposure.evv")
        XCTAssertTrue(get.error?.contains("did you mean") == true, get.error ?? "")

        XCTAssertEqual(r.camera.controlChanges, changesBefore, "nothing reached the camera")
        let evAfter = await r.ask("get", "camera.exposure.ev")
        XCTAssertEqual(evAfter.value, .double(0))
        await r.stop()
    }

    func testAChangeDuringARecordingWaitsForTheClipToEnd() async throws {
        let r = try await start(try Self.config())
        let record = await r.handle(ControlRequest(cmd: "record", action: "start"))
        XCTAssertTrue(record.ok, "\(record)")
        let changesBefore = r.camera.controlChanges

        let set = await r.ask("set", "camera.exposure.ev", .int(-1))
        XCTAssertTrue(set.ok, "\(set)")
        XCTAssertEqual(set.note, "applied when the capture in progress ends")
        XCTAssertEqual(set.value, .double(-1), "the setting holds")
        XCTAssertEqual(set.effective, .double(0), "the camera keeps what the clip started with")
        XCTAssertEqual(r.camera.controlReport.asked.exposure.ev, 0)
        XCTAssertEqual(r.camera.controlChanges, changesBefore, "the clip in flight is not touched")

        let stop = await r.handle(ControlRequest(cmd: "record", action: "stop"))
        XCTAssertEqual(stop.files?.count, 1, "\(stop)")
        try await r.rig.advance(until: "the change once the clip is saved") { r.camera.controlReport.asked.exposure.ev == -1 }
        let evApplied = await r.ask("get", "camera.exposure.ev")
        XCTAssertEqual(evApplied.effective, .double(-1))
        await r.stop()
    }

    func testSettingsSurviveARestartAndAnUnreadableStateFileIsSetAside() async throws {
        let base = try Self.config { $0.camera.exposure.ev = 0.5 }
        let root = base.storage.root
        let statePath = SettingsFile.path(root: root)

        let first = try await start(base)
        let setEV = await first.ask("set", "camera.exposure.ev", .int(2))
        XCTAssertTrue(setEV.ok)
        let flashOff = await first.ask("set", "flash.mode", .string("off"))
        XCTAssertTrue(flashOff.ok)
        await first.stop()
        let text = try String(contentsOfFile: statePath, encoding: .utf8)
        XCTAssertTrue(text.contains(#""ev": 2.0"#), text)

        // A new service on the same card: the changes hold from the camera's first start.
        let second = try await start(base)
        XCTAssertEqual(second.camera.controlReport.asked.exposure.ev, 2)
        let ev = await second.ask("get", "camera.exposure.ev")
        XCTAssertEqual(ev.value, .double(2))
        XCTAssertEqual(ev.source, "runtime")
        let flash = await second.service.status().flashMode
        XCTAssertEqual(flash, "off")
        await second.stop()

        // A key this version does not know is dropped; the rest is kept.
        try #"{"camera": {"exposure": {"ev": 3, "iso": 100}}, "video": {"width": 640}}"#
            .write(toFile: statePath, atomically: true, encoding: .utf8)
        let third = try await start(base)
        XCTAssertEqual(third.camera.controlReport.asked.exposure.ev, 3)
        await third.stop()
        let rewritten = try String(contentsOfFile: statePath, encoding: .utf8)
        XCTAssertFalse(rewritten.contains("iso") || rewritten.contains("width"), rewritten)

        // A corrupt file: set aside, the service starts on the configuration's settings.
        try "{\"camera\": {\"exposure\": ".write(toFile: statePath, atomically: true, encoding: .utf8)
        let fourth = try await start(base)
        XCTAssertEqual(fourth.camera.controlReport.asked.exposure.ev, 0.5)
        let evFromConfig = await fourth.ask("get", "camera.exposure.ev")
        XCTAssertEqual(evFromConfig.source, "config")
        XCTAssertFalse(FileManager.default.fileExists(atPath: statePath))
        XCTAssertEqual(try String(contentsOfFile: statePath + ".corrupt", encoding: .utf8), "{\"camera\": {\"exposure\": ")
        // And the next change is remembered again.
        let zoom = await fourth.ask("set", "camera.zoom", .int(2))
        XCTAssertTrue(zoom.ok)
        XCTAssertTrue(FileManager.default.fileExists(atPath: statePath))
        await fourth.stop()
    }

    /// A value away from the rig's configuration for every settable key. The test
    /// fails when a key is added without one here, so "every setting survives a
    /// restart" stays true of every setting.
    private static let awayFromConfig: [String: JSONValue] = [
        "video.sizes": .array([.string("640x480"), .string("320x240")]),
        "video.torch": .bool(true),
        "still.sizes": .array([.string("800x600")]),
        "flash.mode": .string("on"),
        "camera.exposure.shutterUs": .int(10000),
        "camera.exposure.gain": .double(2.5),
        "camera.exposure.ev": .double(1.5),
        "camera.exposure.metering": .string("spot"),
        "camera.exposure.mode": .string("short"),
        "camera.exposure.flicker": .string("50hz"),
        "camera.exposure.window": .array([.double(0.1), .double(0.1), .double(0.25), .double(0.25)]),
        "camera.whiteBalance.mode": .string("daylight"),
        "camera.whiteBalance.gains": .array([.double(1.5), .double(2.0)]),
        "camera.focus.mode": .string("manual"),
        "camera.focus.range": .string("macro"),
        "camera.focus.speed": .string("fast"),
        "camera.focus.window": .array([.double(0.2), .double(0.2), .double(0.3), .double(0.3)]),
        "camera.focus.lensPosition": .double(2.5),
        "camera.image.brightness": .double(0.2),
        "camera.image.contrast": .double(1.5),
        "camera.image.saturation": .double(0.5),
        "camera.image.sharpness": .double(2),
        "camera.image.denoise": .string("cdn_hq"),
        "camera.zoom": .double(2),
        "camera.roi": .array([.double(0.1), .double(0.1), .double(0.8), .double(0.8)]),
        "camera.hdr": .string("single-exp"),
    ]

    func testEverySettableKeySurvivesARestartAndResetReturnsEveryOneToTheConfig() async throws {
        XCTAssertEqual(Set(Self.awayFromConfig.keys), Set(RuntimeSettings.settableKeys),
                       "a settable key without a test value (or a value for a key that is not settable)")
        let base = try Self.config()
        let first = try await start(base)
        var asSet: [String: JSONValue] = [:]
        for key in RuntimeSettings.settableKeys {
            let before = await first.ask("get", key)
            let reply = await first.ask("set", key, Self.awayFromConfig[key])
            XCTAssertTrue(reply.ok, "\(key): \(reply.error ?? "")")
            XCTAssertNotEqual(reply.value, before.value, "\(key): the test value is the configuration's")
            asSet[key] = reply.value
        }
        await first.stop()

        // A new service on the same card: every change is back, from the camera's first start.
        let second = try await start(base)
        for key in RuntimeSettings.settableKeys {
            let got = await second.ask("get", key)
            XCTAssertEqual(got.value, asSet[key], key)
            XCTAssertEqual(got.source, "runtime", key)
        }
        // The camera in use (with other sizes the board opens it anew): what status shows.
        let asked = await second.service.status().camera.asked
        XCTAssertEqual(asked.exposure.ev, 1.5)
        XCTAssertEqual(asked.whiteBalance.gains, [1.5, 2.0])
        XCTAssertEqual(asked.focus.lensPosition, 2.5)
        XCTAssertEqual(asked.zoom, 2)
        let flash = await second.service.status().flashMode
        XCTAssertEqual(flash, "on")

        // reset: every key back to the configuration's value, and nothing left to remember.
        let reset = await second.ask("reset")
        XCTAssertTrue(reset.ok, reset.error ?? "")
        XCTAssertEqual(Set(reset.settings?.map(\.key) ?? []), Set(RuntimeSettings.settableKeys))
        for key in RuntimeSettings.settableKeys {
            let got = await second.ask("get", key)
            XCTAssertEqual(got.source, "config", key)
            XCTAssertNotEqual(got.value, asSet[key], key)
        }
        let askedAfterReset = await second.service.status().camera.asked
        XCTAssertEqual(askedAfterReset, base.camera.controls)
        XCTAssertFalse(FileManager.default.fileExists(atPath: SettingsFile.path(root: base.storage.root)))
        await second.stop()
    }

    func testSIGHUPAppliesTheRereadFileUnderTheRuntimeChangesAndABadFileKeepsThem() async throws {
        let root = try DaemonHarness.makeTempDir()
        let file = root + "/shutter.json"
        func write(_ text: String) throws { try text.write(toFile: file, atomically: true, encoding: .utf8) }
        let reload: @Sendable () throws(ConfigError) -> ShutterConfig = { () throws(ConfigError) -> ShutterConfig in
            let c = try ConfigLoader.load(configFile: file, defaultConfigFile: nil, requireBoardFile: false)
            // The test's own sizes and storage, as the command line would give them.
            return (try? Self.config(root: root + "/data") {
                $0.camera = c.camera
                $0.flash = c.flash
                $0.video.torch = c.video.torch
                $0.video.fps = c.video.fps
            }) ?? c
        }
        try write(#"{"camera": {"exposure": {"ev": 0.5}}}"#)
        let r = try await start(try reload(), reload: reload)
        let log = r.rig.log
        let setEV = await r.ask("set", "camera.exposure.ev", .int(2))
        XCTAssertTrue(setEV.ok)

        // The file changes: its settable keys apply, the runtime change still wins, a size needs a restart.
        try write(#"{"camera": {"exposure": {"ev": 1, "metering": "spot"}}, "flash": {"mode": "on"}, "video": {"fps": 25}}"#)
        r.signals.yield(.reload)
        try await r.rig.advance(until: "the reread file") { r.camera.controlReport.asked.exposure.metering == .spot }
        XCTAssertEqual(r.camera.controlReport.asked.exposure.ev, 2, "the runtime change wins over the file")
        let flash = await r.service.status().flashMode
        XCTAssertEqual(flash, "on")
        let metering = await r.ask("get", "camera.exposure.metering")
        XCTAssertEqual(metering.source, "config")
        try await r.rig.advance(until: "the restart warning") { log.text.contains("needs a restart: video.fps") }
        let resetEV = await r.ask("reset", "camera.exposure.ev")
        XCTAssertTrue(resetEV.ok)
        XCTAssertEqual(r.camera.controlReport.asked.exposure.ev, 1, "reset goes to the reread file's value")

        // A bad file: nothing changes, and the log says why as a bad file at start does.
        try write(#"{"camera": {"exposure": {"ev": 10, "metering": "average"}}}"#)
        r.signals.yield(.reload)
        try await r.rig.advance(until: "the refusal") { log.text.contains("configuration not reread") }
        let why: String
        do throws(ConfigError) {
            _ = try ConfigLoader.load(configFile: file, defaultConfigFile: nil, requireBoardFile: false)
            why = "(loaded)"
        } catch {
            why = "configuration: \(error.description)"
        }
        XCTAssertTrue(log.text.contains(why), "\(why)\n\(log.text)")
        XCTAssertEqual(r.camera.controlReport.asked.exposure.metering, .spot)
        XCTAssertEqual(r.camera.controlReport.asked.exposure.ev, 1)
        let flashAfter = await r.service.status().flashMode
        XCTAssertEqual(flashAfter, "on")
        await r.stop()
    }
}
