// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
import ShutterSim
@testable import ShutterService

/// A press from power-off: the button already held when the service starts, the camera's
/// first frame 3 s later (the sim's start delay, on the manual clock). A tap made before
/// that frame is a photo once it comes; a hold is a clip from it to the release.
final class PowerOnPressTests: XCTestCase {
    private func rig(_ clock: ManualClock, _ button: SimButton) async throws -> InProcessRig {
        try await InProcessRig.start(self, clock: clock, button: button, camera: { $0.startDelayMs = 3000 }, edit: { c in
            c.video.width = 320
            c.video.height = 240
            c.still.width = 640
            c.still.height = 480
            c.video.preset = "ultrafast"
            c.shutdown.taps = 0
        }, waitReady: false)
    }

    func testATapMadeBeforeTheFirstFrameIsAPhotoOnceItComes() async throws {
        let clock = ManualClock(start: .milliseconds(1_000_000))
        let button = SimButton(clock: clock)
        button.press()
        let r = try await rig(clock, button)
        await r.advance(by: .milliseconds(200))
        button.release()
        await r.advance(by: .milliseconds(500))
        let state = await r.service.status().state
        XCTAssertEqual(state, "booting", "the tap ended before the camera's first frame")
        XCTAssertEqual(r.files("JPG").count, 0)
        try await r.advance(until: "the photo") { r.files("JPG").count == 1 }
        try await r.advance(until: "idle") { await r.service.status().state == "idle" }
        XCTAssertEqual(r.files("MP4").count, 0)
    }

    func testAPressHeldFromPowerOnIsAClipFromTheFirstFrameToTheRelease() async throws {
        let clock = ManualClock(start: .milliseconds(1_000_000))
        let button = SimButton(clock: clock)
        button.press()
        let r = try await rig(clock, button)
        try await r.advance(until: "recording") { await r.service.status().state == "recording" }
        let firstFrame = clock.now()
        await r.advance(by: .seconds(3))
        button.release()
        try await r.advance(until: "the clip") {
            let state = await r.service.status().state
            return r.files("MP4").count == 1 && state == "idle"
        }
        XCTAssertEqual(r.files("JPG").count, 0)
        let (_, out, _) = try runTool("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", r.files("MP4")[0]])
        let seconds = try XCTUnwrap(Double(out.trimmingCharacters(in: .whitespacesAndNewlines)), out)
        print("power-on hold: recording from \(firstFrame) (3 s after the start), clip \(seconds) s")
        // From the first frame to the release: 3 s, not the 6 s the button was held.
        XCTAssertEqual(seconds, 3, accuracy: 0.5)
    }
}

/// A trigger input already active when the service starts: taken at the camera's first
/// frame, which comes 12 s later here: after the 10 s a trigger's photo may wait for a busy
/// camera, which counts from that frame, not from the start.
final class PowerOnTriggerTests: XCTestCase {
    private func rig(_ inputs: String) async throws -> InProcessRig {
        try await InProcessRig.start(self, json: """
            {"video": {"fps": 10, "width": 320, "height": 240}, "still": {"width": 640, "height": 480},
             "audio": {"enabled": false}, "triggers": {"inputs": [\(inputs)]}}
            """, camera: { $0.startDelayMs = 12_000 }, waitReady: false)
    }

    private func line(_ r: InProcessRig, _ name: String) throws -> SimButton {
        try XCTUnwrap(r.service.ctx.roles.simTrigger(name), "the sim board's line for \(name)")
    }

    func testAPIRActiveAtPowerOnIsAPhotoAtTheFirstFrame() async throws {
        let r = try await rig(#"{"name": "pir", "line": "GPIO23"}"#)
        let pir = try line(r, "pir")
        pir.set(pressed: true)
        await r.advance(by: .seconds(1))
        pir.set(pressed: false)
        try await r.advance(until: "the trigger's photo") { r.files("JPG").count == 1 }
        let state = await r.service.status()
        XCTAssertEqual(state.triggers?.first?.skipped, 0, "\(String(describing: state.triggers))")
        XCTAssertEqual(state.triggers?.first?.photos, 1, "\(String(describing: state.triggers))")
    }

    func testADoorOpenAtPowerOnIsAClipFromTheFirstFrame() async throws {
        let r = try await rig(#"{"name": "door", "line": "GPIO24", "action": "clip", "clipAfterSeconds": 2}"#)
        let door = try line(r, "door")
        door.set(pressed: true)
        try await r.advance(until: "recording") { await r.service.status().state == "recording" }
        await r.advance(by: .seconds(3))
        door.set(pressed: false)
        try await r.advance(until: "the clip") {
            let state = await r.service.status().state
            return r.files("MP4").count == 1 && state == "idle"
        }
        let (_, out, _) = try runTool("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", r.files("MP4")[0]])
        let seconds = try XCTUnwrap(Double(out.trimmingCharacters(in: .whitespacesAndNewlines)), out)
        print("power-on door: clip \(seconds) s (first frame 12 s after the start, open 3 s after it, 2 s more)")
        XCTAssertEqual(seconds, 5, accuracy: 0.6)
    }
}
