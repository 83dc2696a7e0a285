// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterControl
import XCTest

/// A 4 s shutter is a 4 s frame (libcamera lengthens the frame duration to the exposure;
/// the simulated camera does as well). Every wait for "the next frame" follows that period:
/// a tap still gets the frame exposed across its press, a 20 s hold gets its ~5 frames and
/// all its sound, and nothing stalls, restarts the camera or gives up. On the manual clock.
final class LongExposureTests: XCTestCase {
    func testFourSecondFramesGiveThePressPhotoAndAWholeClip() async throws {
        let r = try await InProcessRig.start(self, json: #"{ "camera": { "exposure": { "shutterUs": 4000000 } } }"#)
        _ = try await r.photo()
        let status = await r.status()
        let photo = try XCTUnwrap(status.lastPhoto)
        print("long exposure: tap's frame began \(photo.pressToExposureMs) ms from the press (4 s exposure)")
        XCTAssertEqual(photo.moment, "press")
        XCTAssertLessThanOrEqual(photo.pressToExposureMs, 0, "the frame's exposure began at or before the press")
        XCTAssertGreaterThanOrEqual(photo.pressToExposureMs, -4_100, "and ended after it")

        let reply = try await r.ask(ControlRequest(cmd: "hold", seconds: 20), limit: .seconds(120))
        XCTAssertTrue(reply.ok, "\(reply)")
        let clip = try XCTUnwrap(reply.files?.first)
        let (_, out, _) = try runTool("ffprobe", ["-v", "error", "-count_frames", "-show_entries",
                                                  "stream=codec_type,nb_read_frames,duration", "-of", "csv=p=0", clip])
        let rows = out.split(separator: "\n").map { $0.split(separator: ",") }
        let video = try XCTUnwrap(rows.first { $0.first == "video" })
        let audio = try XCTUnwrap(rows.first { $0.first == "audio" }, "the clip has its sound: \(out)")
        let frames = Int(video.last ?? "") ?? -1
        let sound = Double(audio[1]) ?? -1
        print("long exposure: a 20 s hold gave \(frames) frames and \(sound) s of sound")
        XCTAssertTrue((4...7).contains(frames), "~5 frames of 4 s in 20 s, not \(frames)")
        XCTAssertEqual(sound, 20, accuracy: 1.0, "all the sound")

        let s = await r.status()
        XCTAssertEqual(s.counters.cameraRestarts, 0, "no camera restart")
        XCTAssertEqual(s.state, "idle")
        XCTAssertFalse(r.log.text.contains("watchdog"), "no watchdog complaint: \(r.log.text.suffix(1500))")
    }
}
