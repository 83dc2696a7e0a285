// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
import ShutterSim
@testable import ShutterService

/// Issue 11: the configured sensor controls reach the camera, and a control the
/// camera lacks is said (in `status` and the log), never dropped silently. The
/// service in this process on the manual clock (InProcessRig).
final class ServiceCameraControlsTests: XCTestCase {
    func testConfiguredControlsReachTheSimulatedCameraAndWhatItLacksIsInStatusAndTheLog() async throws {
        var config = ShutterConfig()
        config.storage.root = try DaemonHarness.makeTempDir()
        config.video.width = 320
        config.video.height = 240
        config.still.width = 640
        config.still.height = 480
        config.audio.enabled = false
        config.sim.modeSwitchMs = 0
        config.still.moment = .focused  // a still, so the granted still size is known
        config.camera.exposure.ev = 1.5
        config.camera.whiteBalance.mode = .daylight
        config.camera.focus.lensPosition = 2
        config.camera.zoom = 2
        config.camera.hdr = .singleExp
        // The simulated camera is told it has no HDR and no autofocus. Autofocus is
        // left at its default (continuous), which asks nothing: not reported.
        let rig = try await InProcessRig.start(self, config: config, camera: { $0.lacking = ["HdrMode", "AfMode"] })
        let sim = rig.board.camera
        let s = await rig.status()
        let photo = try await rig.ask(ControlRequest(cmd: "photo"))
        XCTAssertTrue(photo.ok, "\(photo)")
        let after = await rig.status()
        let code = try await rig.stop()
        XCTAssertEqual(code, 0)
        let log = rig.log.text

        // The configuration's controls reached the camera.
        XCTAssertEqual(sim.settings.controls, config.camera.controls)
        XCTAssertEqual(sim.controlReport.asked.exposure.ev, 1.5)

        // status: what was asked, what the camera lacks and why, the granted size.
        XCTAssertEqual(s.camera.model, "Shutter Sim Camera")
        XCTAssertEqual(s.camera.asked, config.camera.controls)
        XCTAssertEqual(s.camera.lacking.map(\.description), ["HdrMode: not supported by this camera"])
        XCTAssertEqual(s.camera.lacking.first?.keys, ["camera.hdr"])
        XCTAssertEqual(s.camera.videoSize, PixelSize(width: 320, height: 240))
        XCTAssertNil(s.camera.stillSize, "no still yet")
        XCTAssertEqual(after.camera.stillSize, PixelSize(width: 640, height: 480), "known once a still was taken")

        // On the wire, for shutterctl and scripts.
        let json = String(decoding: ControlCoding.encode(ControlReply(ok: true, status: s)), as: UTF8.self)
        XCTAssertTrue(json.contains(#""lacking":[{"control":"HdrMode","keys":["camera.hdr"],"reason":"not supported by this camera"}]"#), json)
        XCTAssertTrue(json.contains(#""whiteBalance":{"gains":null,"mode":"daylight"}"#), json)
        XCTAssertTrue(json.contains(#""videoSize":{"height":240,"width":320}"#), json)

        // The log: one warning for the lacking control, and the granted sizes.
        let warnings = log.split(separator: "\n").filter { $0.contains("camera control not applied") }
        XCTAssertEqual(warnings, ["<4>shutter.service: camera control not applied: HdrMode: not supported by this camera (camera.hdr)"], log)
        XCTAssertTrue(log.contains("camera Shutter Sim Camera started, video 320x240 (as asked)"), log)
        XCTAssertTrue(log.contains("stills are 640x480 (as asked)"), log)
    }

    /// A camera without anything to report: no lacking controls, no warning.
    func testDefaultsOnACameraLackingEverythingReportNothing() async throws {
        var config = ShutterConfig()
        config.storage.root = try DaemonHarness.makeTempDir()
        config.video.width = 320
        config.video.height = 240
        config.audio.enabled = false
        let rig = try await InProcessRig.start(self, config: config, camera: { $0.lacking = Set(CameraControlID.allCases) })
        let s = await rig.status()
        XCTAssertEqual(s.camera.lacking, [])
        XCTAssertEqual(s.camera.asked, CameraControls())
        let code = try await rig.stop()
        XCTAssertEqual(code, 0)
    }

    /// `focus X Y` on a camera without an exposure metering window (as every
    /// libcamera camera is): the focus half is applied, the exposure half is
    /// said in the reply, in `status` and in the log, never dropped.
    func testAPointOfInterestWithoutAnExposureWindowIsReportedNotDropped() async throws {
        var config = ShutterConfig()
        config.storage.root = try DaemonHarness.makeTempDir()
        config.video.width = 320
        config.video.height = 240
        config.audio.enabled = false
        config.sim.modeSwitchMs = 0
        let rig = try await InProcessRig.start(self, config: config, camera: { $0.lacking = ["AeMeteringWindow"] })
        let sim = rig.board.camera
        let r = try await rig.focus(0.3, 0.8)
        let status: ServiceStatus? = await rig.status()
        let log = rig.log.text
        print("focus 0.3 0.8 without an exposure window: \(r.note ?? "")")
        XCTAssertTrue(r.ok, "\(r)")
        XCTAssertEqual(sim.controlReport.asked.focus.window, [0.2375, 0.7375, 0.125, 0.125], "the focus half reached the camera")
        XCTAssertTrue(r.note?.contains("not applied: AeMeteringWindow: libcamera has no control for an exposure metering window") ?? false,
                      r.note ?? "")
        let exposure = r.settings?.first { $0.key == "camera.exposure.window" }
        XCTAssertEqual(exposure?.source, "runtime", "kept: a camera that has it later gets it")
        XCTAssertNil(exposure?.effective, "not in effect")
        XCTAssertNotNil(r.settings?.first { $0.key == "camera.focus.window" }?.effective)
        let lacking = try XCTUnwrap(status?.camera.lacking)
        XCTAssertEqual(lacking.map(\.control), ["AeMeteringWindow"])
        XCTAssertEqual(lacking.first?.keys, ["camera.exposure.window"])
        XCTAssertTrue(log.contains("camera control not applied: AeMeteringWindow"), log)
        XCTAssertEqual(status?.camera.frame?.metering, .centre, "without the window the mode meters (EXIF MeteringMode)")
    }

    /// Frames say how they were metered (EXIF MeteringMode takes it), and say
    /// nothing where the camera has no metering control.
    func testFramesReportTheMeteringInEffectOnlyWhereTheCameraMeters() async throws {
        func firstFrame(_ edit: (inout SimCamera.Settings) -> Void) async throws -> FrameMetadata {
            var s = SimCamera.Settings()
            (s.width, s.height, s.videoSizes) = (160, 120, [])
            edit(&s)
            let camera = SimCamera(settings: s)
            var frames = try await camera.start().makeAsyncIterator()  // an AsyncStream
            let next = await frames.next()
            let f = try XCTUnwrap(next)
            await camera.stop()
            return f.metadata
        }
        let plain = try await firstFrame { _ in }
        let spot = try await firstFrame { $0.controls.exposure.metering = .spot }
        let window = try await firstFrame { $0.controls.exposure.window = [0.4, 0.4, 0.2, 0.2] }
        let noWindow = try await firstFrame {
            $0.controls.exposure.window = [0.4, 0.4, 0.2, 0.2]
            $0.lacking = ["AeMeteringWindow"]
        }
        let none = try await firstFrame { $0.lacking = ["AeMeteringMode"] }
        XCTAssertEqual(plain.metering, .centre)
        XCTAssertEqual(spot.metering, .spot)
        XCTAssertEqual(window.metering, .window)
        XCTAssertEqual(noWindow.metering, .centre)
        XCTAssertNil(none.metering)
    }
}
