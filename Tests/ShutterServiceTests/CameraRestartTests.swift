// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
@testable import ShutterService

/// The service on the simulated board (in this process, on the manual clock:
/// InProcessRig), driven only through control requests as shutterctl sends them:
/// a setting the running camera cannot take (`video.sizes`, `still.sizes`,
/// `camera.hdr` to or from `sensor`) restarts the camera between captures,
/// says so, shows what was granted, is remembered, and goes back when the
/// camera does not start with it (issue 11).
final class CameraRestartTests: XCTestCase {
    /// Camera 0 has a sensor HDR mode (as imx708), camera 1 has none.
    // `focused`: a photo is a still at still.sizes (a `press` photo would be the video frame).
    private static let config = #"{"video": {"width": 320, "height": 240}, "still": {"width": 640, "height": 480, "moment": "focused"}, "#
        + #""audio": {"enabled": false}, "sim": {"modeSwitchMs": 0, "cameras": "#
        + #"[{"model": "Sim HDR", "sensorHdr": true}, "Sim Plain"]}}"#

    private func videoSize(_ d: InProcessRig) async -> String? {
        await d.status().camera.videoSize.map { "\($0.width)x\($0.height)" }
    }

    private func photoSize(_ d: InProcessRig, file: StaticString = #filePath, line: UInt = #line) async throws -> String {
        let path = try await d.photo(file: file, line: line)
        let (_, out, _) = try runTool("exiftool", ["-s3", "-ImageSize", path])
        return out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func lackingHDR(_ d: InProcessRig) async -> String? {
        await d.status().camera.lacking.first { $0.control == "HdrMode" }?.reason
    }

    private func camera(_ d: InProcessRig, _ arg: String) async throws -> ControlReply {
        try await d.ask(ControlRequest(cmd: "camera", camera: arg))
    }

    func testSizesRestartTheCameraAreGrantedRememberedAndReset() async throws {
        let d = try await InProcessRig.start(self, json: Self.config)
        var size = await videoSize(d)
        XCTAssertEqual(size, "320x240")

        var reply = try await d.set("video.sizes", #"["640x480", "320x240"]"#)
        XCTAssertTrue(reply.ok, "\(reply)")
        let note = try XCTUnwrap(reply.note, "\(reply)")
        XCTAssertTrue(note.hasPrefix("the camera restarted for this change; video 640x480 (preference 1 of 2)"), note)
        XCTAssertEqual(reply.value?.strings, ["640x480", "320x240"])
        size = await videoSize(d)
        XCTAssertEqual(size, "640x480")
        let entry = await d.status().camera.videoSizeEntry
        XCTAssertEqual(entry, 0)
        XCTAssertTrue(d.log.text.contains("camera restart for video.sizes 640x480, 320x240 (was 320x240)"), d.log.text)

        reply = try await d.set("still.sizes", #"["800x600"]"#)
        XCTAssertTrue(reply.ok, "\(reply)")
        var photo = try await photoSize(d)
        XCTAssertEqual(photo, "800x600")

        // A value the schema refuses restarts nothing.
        reply = try await d.set("video.sizes", #"["641x480"]"#)
        XCTAssertFalse(reply.ok)
        XCTAssertTrue(reply.error?.contains("video.sizes") == true, "\(reply)")
        size = await videoSize(d)
        XCTAssertEqual(size, "640x480")

        // Remembered across a restart of the service.
        let code = try await d.stop()
        XCTAssertEqual(code, 0)
        let e = try await InProcessRig.start(self, json: Self.config, dir: d.dir)
        size = await videoSize(e)
        XCTAssertEqual(size, "640x480", e.log.text)
        photo = try await photoSize(e)
        XCTAssertEqual(photo, "800x600")

        // reset: back to the configuration's sizes, with a restart.
        reply = try await e.ask("reset")
        XCTAssertTrue(reply.ok, "\(reply)")
        XCTAssertTrue(reply.note?.hasPrefix("the camera restarted for this change; video 320x240 (as asked)") == true, "\(reply)")
        size = await videoSize(e)
        XCTAssertEqual(size, "320x240")
        photo = try await photoSize(e)
        XCTAssertEqual(photo, "640x480")
        // Nothing to change: no restart.
        reply = try await e.set("video.sizes", "null")
        XCTAssertTrue(reply.ok)
        XCTAssertNil(reply.note, "\(reply)")
    }

    func testSensorHDRRestartsIntoItAndIsLackingOnACameraWithout() async throws {
        let d = try await InProcessRig.start(self, json: Self.config)
        var hdr = await d.status().camera.sensorHdr
        XCTAssertEqual(hdr, false)

        var reply = try await d.set("camera.hdr", #""sensor""#)
        XCTAssertTrue(reply.ok, "\(reply)")
        let note = try XCTUnwrap(reply.note)
        XCTAssertTrue(note.hasPrefix("the camera restarted for this change"), note)
        XCTAssertTrue(note.contains("sensor HDR on"), note)
        XCTAssertEqual(reply.effective, .string("sensor"))
        hdr = await d.status().camera.sensorHdr
        XCTAssertEqual(hdr, true)
        var lacking = await lackingHDR(d)
        XCTAssertNil(lacking)

        // Single-exposure HDR is a control of the running camera: no restart,
        // except that it leaves the sensor's mode.
        reply = try await d.set("camera.hdr", #""off""#)
        XCTAssertTrue(reply.ok)
        XCTAssertTrue(reply.note?.hasPrefix("the camera restarted") == true, "\(reply)")
        hdr = await d.status().camera.sensorHdr
        XCTAssertEqual(hdr, false)
        reply = try await d.set("camera.hdr", #""single-exp""#)
        XCTAssertTrue(reply.ok)
        XCTAssertNil(reply.note, "no restart: \(reply)")

        // The camera without a sensor HDR mode: reported lacking, with why, never dropped.
        reply = try await camera(d, "1")
        XCTAssertTrue(reply.ok, "\(reply)")
        reply = try await d.set("camera.hdr", #""sensor""#)
        XCTAssertTrue(reply.ok, "\(reply)")
        XCTAssertNil(reply.effective?.string)
        hdr = await d.status().camera.sensorHdr
        XCTAssertEqual(hdr, false)
        lacking = await lackingHDR(d)
        let cam = await d.status().camera
        let why = try XCTUnwrap(lacking, "\(cam)")
        XCTAssertTrue(why.hasPrefix("this camera's sensor has no HDR mode"), why)
        XCTAssertTrue(d.log.text.contains("camera control not applied: HdrMode: this camera's sensor has no HDR mode"), d.log.text)

        // Back to the camera with it: the remembered setting opens it in HDR.
        reply = try await camera(d, "0")
        XCTAssertTrue(reply.ok, "\(reply)")
        hdr = await d.status().camera.sensorHdr
        XCTAssertEqual(hdr, true)
        lacking = await lackingHDR(d)
        XCTAssertNil(lacking)
    }

    func testARestartThatFailsGoesBackToThePreviousSettings() async throws {
        let d = try await InProcessRig.start(self, json: Self.config)
        // The camera fails every start from now on.
        let fault = try await d.ask(ControlRequest(cmd: "sim", fault: "error"))
        XCTAssertTrue(fault.ok)
        let reply = try await d.set("video.sizes", #"["640x480"]"#)
        XCTAssertFalse(reply.ok, "\(reply)")
        let error = try XCTUnwrap(reply.error)
        XCTAssertTrue(error.hasPrefix("the camera did not start with video.sizes 640x480 (was 320x240): "
                                      + "simulated camera failed to start"), error)
        XCTAssertTrue(error.contains("starting it again with the previous settings failed too"), error)
        let got = try await d.ask("get", "video.sizes")
        XCTAssertEqual(got.source, "config", "the setting went back: \(got)")
        // The camera comes back (the watchdog's restarts) with the previous sizes.
        let none = try await d.ask(ControlRequest(cmd: "sim", fault: "none"))
        XCTAssertTrue(none.ok)
        try await d.wait(for: "idle", limit: .seconds(30))
        let size = await videoSize(d)
        XCTAssertEqual(size, "320x240")
        XCTAssertFalse(FileManager.default.fileExists(atPath: d.root + "/.shutter-settings.json"))
    }

    /// A deliberate reopen (a switch, a restart for a setting) that takes far
    /// longer than the frame timeout (a slow sensor start) is not counted as a
    /// stalled camera: no watchdog restart, no warning.
    func testASlowSwitchOrRestartIsNotAWatchdogFailure() async throws {
        let config = #"{"video": {"width": 320, "height": 240}, "still": {"width": 640, "height": 480}, "#
            + #""audio": {"enabled": false}, "watchdog": {"frameTimeoutMs": 800}, "sim": {"modeSwitchMs": 0, "#
            + #""cameras": ["Sim Quick", {"model": "Sim Slow", "startDelayMs": 2500}]}}"#
        let d = try await InProcessRig.start(self, json: config)
        var reply = try await camera(d, "1")
        XCTAssertTrue(reply.ok, "\(reply)")
        reply = try await d.set("video.sizes", #"["640x480"]"#)
        XCTAssertTrue(reply.ok, "\(reply)")
        let size = await videoSize(d)
        XCTAssertEqual(size, "640x480")
        reply = try await camera(d, "0")
        XCTAssertTrue(reply.ok, "\(reply)")
        let s = await d.status()
        XCTAssertEqual(s.counters.cameraRestarts, 0, d.log.text)
        XCTAssertFalse(d.log.text.contains("no camera frames"), d.log.text)
        XCTAssertEqual(s.state, "idle")
    }
}

extension JSONValue {
    var string: String? {
        if case .string(let s) = self { return s }
        return nil
    }
}
