import Foundation
import XCTest
@testable import ShutterService

/// The real shutterd on the simulated board, driven only through shutterctl:
/// a setting the running camera cannot take (`video.sizes`, `still.sizes`,
/// `camera.hdr` to or from `sensor`) restarts the camera between captures,
/// says so, shows what was granted, is remembered, and goes back when the
/// camera does not start with it (issue 11).
final class EndToEndCameraRestartTests: XCTestCase {
    /// Camera 0 has a sensor HDR mode (as imx708), camera 1 has none.
    // `focused`: a photo is a still at still.sizes (a `press` photo would be the video frame).
    private static let config = #"{"video": {"width": 320, "height": 240}, "still": {"width": 640, "height": 480, "moment": "focused"}, "#
        + #""audio": {"enabled": false}, "sim": {"modeSwitchMs": 0, "cameras": "#
        + #"[{"model": "Sim HDR", "sensorHdr": true}, "Sim Plain"]}}"#

    private func camera(_ d: DaemonHarness) throws -> [String: Any] {
        try XCTUnwrap(try d.status()["camera"] as? [String: Any])
    }

    private func videoSize(_ d: DaemonHarness) throws -> String? {
        let size = try camera(d)["videoSize"] as? [String: Int]
        return size.map { "\($0["width"]!)x\($0["height"]!)" }
    }

    private func photoSize(_ d: DaemonHarness, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let (code, reply) = try d.ctl("tap")
        XCTAssertEqual(code, 0, "tap: \(String(describing: reply))\n\(d.log())", file: file, line: line)
        let path = try XCTUnwrap((reply?["files"] as? [String])?.first, d.log(), file: file, line: line)
        let (_, out, _) = try runTool("exiftool", ["-s3", "-ImageSize", path])
        return out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func lackingHDR(_ d: DaemonHarness) throws -> String? {
        let lacking = try camera(d)["lacking"] as? [[String: Any]] ?? []
        return lacking.first { $0["control"] as? String == "HdrMode" }?["reason"] as? String
    }

    func testSizesRestartTheCameraAreGrantedRememberedAndReset() throws {
        let d = try DaemonHarness(config: Self.config)
        try d.start()
        defer { d.stop() }
        XCTAssertEqual(try videoSize(d), "320x240")

        var (code, reply) = try d.ctl("set", "video.sizes", #"["640x480", "320x240"]"#)
        XCTAssertEqual(code, 0, "\(String(describing: reply))\n\(d.log())")
        let note = try XCTUnwrap(reply?["note"] as? String, "\(String(describing: reply))")
        XCTAssertTrue(note.hasPrefix("the camera restarted for this change; video 640x480 (preference 1 of 2)"), note)
        XCTAssertEqual(reply?["value"] as? [String], ["640x480", "320x240"])
        XCTAssertEqual(try videoSize(d), "640x480")
        XCTAssertEqual(try camera(d)["videoSizeEntry"] as? Int, 0)
        XCTAssertTrue(d.log().contains("camera restart for video.sizes 640x480, 320x240 (was 320x240)"), d.log())

        (code, reply) = try d.ctl("set", "still.sizes", #"["800x600"]"#)
        XCTAssertEqual(code, 0, "\(String(describing: reply))")
        XCTAssertEqual(try photoSize(d), "800x600")

        // A value the schema refuses restarts nothing.
        (code, reply) = try d.ctl("set", "video.sizes", #"["641x480"]"#)
        XCTAssertEqual(code, 1)
        XCTAssertTrue((reply?["error"] as? String)?.contains("video.sizes") == true, "\(String(describing: reply))")
        XCTAssertEqual(try videoSize(d), "640x480")

        // Remembered across a restart of the service.
        d.stop()
        try d.start()
        XCTAssertEqual(try videoSize(d), "640x480", d.log())
        XCTAssertEqual(try photoSize(d), "800x600")

        // reset: back to the configuration's sizes, with a restart.
        (code, reply) = try d.ctl("reset")
        XCTAssertEqual(code, 0, "\(String(describing: reply))")
        XCTAssertTrue((reply?["note"] as? String)?.hasPrefix("the camera restarted for this change; video 320x240 (as asked)") == true,
                      "\(String(describing: reply))")
        XCTAssertEqual(try videoSize(d), "320x240")
        XCTAssertEqual(try photoSize(d), "640x480")
        // Nothing to change: no restart.
        (code, reply) = try d.ctl("set", "video.sizes", "null")
        XCTAssertEqual(code, 0)
        XCTAssertNil(reply?["note"], "\(String(describing: reply))")
    }

    func testSensorHDRRestartsIntoItAndIsLackingOnACameraWithout() throws {
        let d = try DaemonHarness(config: Self.config)
        try d.start()
        defer { d.stop() }
        XCTAssertEqual(try camera(d)["sensorHdr"] as? Bool, false)

        var (code, reply) = try d.ctl("set", "camera.hdr", #""sensor""#)
        XCTAssertEqual(code, 0, "\(String(describing: reply))\n\(d.log())")
        let note = try XCTUnwrap(reply?["note"] as? String)
        XCTAssertTrue(note.hasPrefix("the camera restarted for this change"), note)
        XCTAssertTrue(note.contains("sensor HDR on"), note)
        XCTAssertEqual(reply?["effective"] as? String, "sensor")
        XCTAssertEqual(try camera(d)["sensorHdr"] as? Bool, true)
        XCTAssertNil(try lackingHDR(d))

        // Single-exposure HDR is a control of the running camera: no restart,
        // except that it leaves the sensor's mode.
        (code, reply) = try d.ctl("set", "camera.hdr", #""off""#)
        XCTAssertEqual(code, 0)
        XCTAssertTrue((reply?["note"] as? String)?.hasPrefix("the camera restarted") == true, "\(String(describing: reply))")
        XCTAssertEqual(try camera(d)["sensorHdr"] as? Bool, false)
        (code, reply) = try d.ctl("set", "camera.hdr", #""single-exp""#)
        XCTAssertEqual(code, 0)
        XCTAssertNil(reply?["note"], "no restart: \(String(describing: reply))")

        // The camera without a sensor HDR mode: reported lacking, with why, never dropped.
        XCTAssertEqual(try d.ctl("camera", "1").0, 0)
        (code, reply) = try d.ctl("set", "camera.hdr", #""sensor""#)
        XCTAssertEqual(code, 0, "\(String(describing: reply))")
        XCTAssertNil(reply?["effective"] as? String)
        XCTAssertEqual(try camera(d)["sensorHdr"] as? Bool, false)
        let cam = try camera(d)
        let why = try XCTUnwrap(try lackingHDR(d), "\(cam)")
        XCTAssertTrue(why.hasPrefix("this camera's sensor has no HDR mode"), why)
        XCTAssertTrue(d.log().contains("camera control not applied: HdrMode: this camera's sensor has no HDR mode"), d.log())

        // Back to the camera with it: the remembered setting opens it in HDR.
        (code, reply) = try d.ctl("camera", "0")
        XCTAssertEqual(code, 0, "\(String(describing: reply))")
        XCTAssertEqual(try camera(d)["sensorHdr"] as? Bool, true)
        XCTAssertNil(try lackingHDR(d))
    }

    func testARestartThatFailsGoesBackToThePreviousSettings() throws {
        let d = try DaemonHarness(config: Self.config)
        try d.start()
        defer { d.stop() }
        // The camera fails every start from now on.
        XCTAssertEqual(try d.ctl("sim", "--fault", "error").0, 0)
        let (code, reply) = try d.ctl("set", "video.sizes", #"["640x480"]"#)
        XCTAssertEqual(code, 1, "\(String(describing: reply))")
        let error = try XCTUnwrap(reply?["error"] as? String)
        XCTAssertTrue(error.hasPrefix("the camera did not start with video.sizes 640x480 (was 320x240): "
                                      + "simulated camera failed to start"), error)
        XCTAssertTrue(error.contains("starting it again with the previous settings failed too"), error)
        let (_, got) = try d.ctl("get", "video.sizes")
        XCTAssertEqual(got?["source"] as? String, "config", "the setting went back: \(String(describing: got))")
        // The camera comes back (the watchdog's restarts) with the previous sizes.
        XCTAssertEqual(try d.ctl("sim", "--fault", "none").0, 0)
        try d.waitFor("the camera back", timeout: 30) { try d.status()["state"] as? String == "idle" }
        XCTAssertEqual(try videoSize(d), "320x240")
        XCTAssertFalse(FileManager.default.fileExists(atPath: d.storage + "/.shutter-settings.json"))
    }

    /// A deliberate reopen (a switch, a restart for a setting) that takes far
    /// longer than the frame timeout (a slow sensor start) is not counted as a
    /// stalled camera: no watchdog restart, no warning.
    func testASlowSwitchOrRestartIsNotAWatchdogFailure() throws {
        let config = #"{"video": {"width": 320, "height": 240}, "still": {"width": 640, "height": 480}, "#
            + #""audio": {"enabled": false}, "watchdog": {"frameTimeoutMs": 800}, "sim": {"modeSwitchMs": 0, "#
            + #""cameras": ["Sim Quick", {"model": "Sim Slow", "startDelayMs": 2500}]}}"#
        let d = try DaemonHarness(config: config)
        try d.start()
        defer { d.stop() }
        var (code, reply) = try d.ctl("camera", "1")
        XCTAssertEqual(code, 0, "\(String(describing: reply))\n\(d.log())")
        (code, reply) = try d.ctl("set", "video.sizes", #"["640x480"]"#)
        XCTAssertEqual(code, 0, "\(String(describing: reply))\n\(d.log())")
        XCTAssertEqual(try videoSize(d), "640x480")
        (code, reply) = try d.ctl("camera", "0")
        XCTAssertEqual(code, 0, "\(String(describing: reply))")
        XCTAssertEqual(try d.counters()["cameraRestarts"], 0, d.log())
        XCTAssertFalse(d.log().contains("no camera frames"), d.log())
        XCTAssertEqual(try d.status()["state"] as? String, "idle")
    }
}
