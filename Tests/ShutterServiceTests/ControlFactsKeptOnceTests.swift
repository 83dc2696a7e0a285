// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
import ShutterStorage
@testable import ShutterService

/// Facts that were kept twice and could drift (issue 29 section 2), now kept
/// once: the flash mode (the runtime settings, which the capture machine is
/// given), and the camera in use with its opening and controls (the control
/// plane's target, which every supervisor command carries). In this process, on
/// the simulated board and the manual clock (InProcessRig).
final class ControlFactsKeptOnceTests: XCTestCase {
    private static let small = #""video": {"width": 320, "height": 240}, "still": {"width": 640, "height": 480}, "#
        + #""audio": {"enabled": false}, "shutdown": {"taps": 0}"#

    /// Two quick presses on the button: a double tap.
    private func doubleTap(_ d: InProcessRig) async {
        for _ in 0..<2 {
            d.board.button.press()
            await d.advance(by: .milliseconds(80))
            d.board.button.release()
            await d.advance(by: .milliseconds(80))
        }
        await d.advance(by: .milliseconds(400))  // past the double-tap window
    }

    private func flash(_ d: InProcessRig, file: StaticString = #filePath, line: UInt = #line) async throws
        -> (value: JSONValue?, source: String?, effective: JSONValue?, status: String)
    {
        let got = try await d.ask("get", "flash.mode", file: file, line: line)
        XCTAssertTrue(got.ok, "\(got)", file: file, line: line)
        return (got.value, got.source, got.effective, await d.status().flashMode)
    }

    func testADoubleTappedFlashModeIsTheSettingGetShowsAndARestartReads() async throws {
        let json = "{" + Self.small + #", "button": {"doubleTapMs": 300}, "flash": {"mode": "off"}}"#
        let first = try await InProcessRig.start(self, json: json)
        await doubleTap(first)
        var f = try await flash(first)
        XCTAssertEqual(f.value, .string("auto"), "a double tap moves off → auto")
        XCTAssertEqual(f.source, "runtime")
        XCTAssertEqual(f.effective, .string("auto"))
        XCTAssertEqual(f.status, "auto")
        XCTAssertEqual(first.files("JPG"), [], "a double tap takes no photo")
        let statePath = SettingsFile.path(root: first.root)
        try await first.advance(until: "the state file") {
            (try? String(contentsOfFile: statePath, encoding: .utf8))?.contains("auto") == true
        }
        let firstCode = try await first.stop()
        XCTAssertEqual(firstCode, 0)

        // A new service on the same card: the mode the double tap chose, and the
        // next double tap goes on from it (auto → on), not from the configuration's off.
        let second = try await InProcessRig.start(self, json: json, dir: first.dir)
        f = try await flash(second)
        XCTAssertEqual(f.value, .string("auto"))
        XCTAssertEqual(f.source, "runtime")
        XCTAssertEqual(f.status, "auto")
        await doubleTap(second)
        f = try await flash(second)
        XCTAssertEqual(f.value, .string("on"), "auto → on")
        XCTAssertEqual(f.effective, .string("on"))
        XCTAssertEqual(f.status, "on")

        // `shutterctl set` and the double tap change the same setting.
        let set = try await second.set("flash.mode", "off")
        XCTAssertTrue(set.ok, "\(set)")
        f = try await flash(second)
        XCTAssertEqual(f.value, .string("off"))
        XCTAssertEqual(f.status, "off")
        await doubleTap(second)
        f = try await flash(second)
        XCTAssertEqual(f.value, .string("auto"), "off → auto, from the set value")
        XCTAssertEqual(f.status, "auto")
        let secondCode = try await second.stop()
        XCTAssertEqual(secondCode, 0)
    }

    /// A switch to a camera that cannot start goes back; then the camera in use
    /// disappears and the watchdog's restart must open that camera (not the
    /// configuration's, not the broken one) with the controls it had.
    func testAWatchdogRestartAfterAFailedSwitchReopensTheCameraInUseWithItsControls() async throws {
        let cameras = #"["Sim Front", {"model": "Sim Loose", "broken": true}, "Sim Back"]"#
        let json = "{" + Self.small + #", "exif": {"model": ""}, "sim": {"modeSwitchMs": 0, "cameras": \#(cameras)}, "#
            + #""watchdog": {"frameTimeoutMs": 300, "restartBackoffMs": 200, "maxRestarts": 50}}"#
        let d = try await InProcessRig.start(self, json: json)
        var reply = try await d.ask(ControlRequest(cmd: "camera", camera: "2"))
        XCTAssertTrue(reply.ok, "\(reply)")
        reply = try await d.ask(ControlRequest(cmd: "camera", camera: "1"))
        XCTAssertFalse(reply.ok, "\(reply)")
        XCTAssertEqual(reply.camera?.model, "Sim Back", "went back to the camera in use")
        // A control set after the failed switch: the camera in use has it.
        reply = try await d.set("camera.exposure.ev", "1.5")
        XCTAssertTrue(reply.ok, "\(reply)")
        XCTAssertEqual(d.board.cameras[2].controlReport.asked.exposure.ev, 1.5)

        // Camera 2 goes away: its stream ends, and it cannot start until it is back.
        let restartsBefore = await d.status().counters.cameraRestarts
        d.board.cameras[2].fault = .disappear
        try await d.wait(for: "camera-unavailable", limit: .seconds(15))
        try await d.advance(until: "a restart", limit: .seconds(15)) {
            await d.status().counters.cameraRestarts > restartsBefore
        }
        d.board.cameras[2].fault = .none
        try await d.wait(for: "idle", limit: .seconds(20))

        let status = await d.status()
        XCTAssertEqual(status.camera.index, 2, "the camera in use, not the configured one")
        XCTAssertEqual(status.camera.model, "Sim Back")
        XCTAssertEqual(status.camera.asked.exposure.ev, 1.5, "with the controls it had")
        let ev = try await d.ask("get", "camera.exposure.ev")
        XCTAssertEqual(ev.effective, .double(1.5))
        let path = try await d.photo()
        let (_, out, _) = try runTool("exiftool", ["-s3", "-Model", path])
        XCTAssertEqual(out.trimmingCharacters(in: .whitespacesAndNewlines), "Sim Back")
        let dCode = try await d.stop()
        XCTAssertEqual(dCode, 0)
    }
}
