import Foundation
import XCTest
import ShutterCore
import ShutterSim
@testable import ShutterService

/// Issue 11: the configured sensor controls reach the camera, and a control the
/// camera lacks is said (in `status` and the log), never dropped silently.
final class ServiceCameraControlsTests: XCTestCase {
    /// Runs `body` with this process's stderr (the service's log) going to a file; returns what was written.
    private func capturingStderr(_ body: () async throws -> Void) async rethrows -> String {
        let path = NSTemporaryDirectory() + "shutter-log-\(UUID().uuidString)"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let saved = dup(2)
        dup2(fd, 2)
        defer {
            dup2(saved, 2)
            close(saved)
            close(fd)
            try? FileManager.default.removeItem(atPath: path)
        }
        try await body()
        return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

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
        let roles = BoardRoles.simulated(config: config) { $0.lacking = [.hdrMode, .afMode] }
        let sim = try XCTUnwrap(roles.sim).camera
        let service = CameraService(config: config, roles: roles)

        var status: ServiceStatus?
        let log = try await capturingStderr {
            let run = Task { await service.run() }
            try await waitUntil("ready") { await service.status().state == "idle" }
            status = await service.status()
            let photo = await service.handle(ControlRequest(cmd: "photo"))
            XCTAssertTrue(photo.ok, "\(photo)")
            service.stop()
            _ = await run.value
        }
        let s = try XCTUnwrap(status)

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
        let after = await service.status()
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
        let roles = BoardRoles.simulated(config: config) { $0.lacking = Set(CameraControlID.allCases) }
        let service = CameraService(config: config, roles: roles)
        let run = Task { await service.run() }
        try await waitUntil("ready") { await service.status().state == "idle" }
        let s = await service.status()
        XCTAssertEqual(s.camera.lacking, [])
        XCTAssertEqual(s.camera.asked, CameraControls())
        service.stop()
        _ = await run.value
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
        let roles = BoardRoles.simulated(config: config) { $0.lacking = [.aeMeteringWindow] }
        let sim = try XCTUnwrap(roles.sim).camera
        let service = CameraService(config: config, roles: roles)
        var reply: ControlReply?
        var status: ServiceStatus?
        let log = try await capturingStderr {
            let run = Task { await service.run() }
            try await waitUntil("ready") { await service.status().state == "idle" }
            var request = ControlRequest(cmd: "focus")
            (request.x, request.y) = (0.3, 0.8)
            reply = await service.handle(request)
            status = await service.status()
            service.stop()
            _ = await run.value
        }
        let r = try XCTUnwrap(reply)
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
            $0.lacking = [.aeMeteringWindow]
        }
        let none = try await firstFrame { $0.lacking = [.aeMeteringMode] }
        XCTAssertEqual(plain.metering, .centre)
        XCTAssertEqual(spot.metering, .spot)
        XCTAssertEqual(window.metering, .window)
        XCTAssertEqual(noWindow.metering, .centre)
        XCTAssertNil(none.metering)
    }
}
