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
