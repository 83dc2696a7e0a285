// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import XCTest
@testable import ShutterMedia

/// The time stamp in a clip, read back from frames FFmpeg decodes: the stamp's rectangle
/// against the renderer's own bitmap blended into the same frame, the rest against the
/// same frames recorded without it (H.264's tolerance), and the source frames untouched.
final class OverlayClipTests: XCTestCase {
    func testTheStampIsInTheDecodedFramesAndNothingElseChanges() throws {
        let w = 640, h = 360
        let scene = StillPattern.scene(.i420, width: w, height: h)
        let before = OverlayFixture.luma(scene)
        let overlay = try OverlayFixture.overlay()
        let placed = try XCTUnwrap(overlay.placed(at: OverlayFixture.start, width: w, height: h))
        let stamped = try decodedLuma(record(scene, overlay: overlay), width: w, height: h)
        let plain = try decodedLuma(record(scene, overlay: nil), width: w, height: h)
        XCTAssertEqual(OverlayFixture.luma(scene), before, "the encoder stamps its copy, never the camera's frame")

        let want = OverlayFixture.expectedLuma(scene, placed)
        let xs = placed.x..<(placed.x + placed.stamp.width), ys = placed.y..<(placed.y + placed.stamp.height)
        for (i, got) in [(0, stamped[0]), (12, stamped[12]), (25, stamped[25])] {
            let inside = OverlayFixture.meanDiff(got, want, width: w, height: h, x: xs, y: ys)
            let withoutStamp = OverlayFixture.meanDiff(plain[i], want, width: w, height: h, x: xs, y: ys)
            XCTAssertLessThan(inside, 6, "frame \(i): the stamp's pixels")
            XCTAssertGreaterThan(withoutStamp, 25, "frame \(i): without the stamp the rectangle differs")
            // Away from the stamp (a macroblock's margin for the deblocking filter): as recorded without it.
            let margin = 16
            let around = OverlayFixture.meanDiff(got, plain[i], width: w, height: h,
                                                 x: max(0, placed.x - margin)..<min(w, xs.upperBound + margin),
                                                 y: max(0, placed.y - margin)..<min(h, ys.upperBound + margin), outside: true)
            XCTAssertLessThan(around, 1.0, "frame \(i): the picture outside the stamp")
        }
    }

    /// Frames that are not I420 (the Pi's NV12, vimc's RGB, a webcam's YUYV): stamped in the
    /// encoder's copy before its conversion; ink white, the box darker than without it.
    func testOtherPixelFormatsCarryTheStampInTheClip() throws {
        let w = 640, h = 480
        for format in [PixelFormat.nv12, .rgb24, .yuyv] {
            let source = StillPattern.frame(format, width: w, height: h)
            let overlay = try OverlayFixture.overlay()
            let p = try XCTUnwrap(overlay.placed(at: OverlayFixture.start, width: w, height: h))
            let got = try decodedLuma(record(source, overlay: overlay), width: w, height: h)[12]
            let without = try decodedLuma(record(source, overlay: nil), width: w, height: h)[12]
            let s = p.stamp
            var ink = 0, white = 0, box = 0, darker = 0
            for r in 0..<s.height {
                for c in 0..<s.width {
                    let i = (p.y + r) * w + p.x + c
                    if s.alpha[r * s.width + c] == 255 { ink += 1; if got[i] >= 190 { white += 1 } }
                    if c < s.height / 5 - 2 { box += 1; if Int(got[i]) < Int(without[i]) - 25 { darker += 1 } }
                }
            }
            XCTAssertGreaterThan(Double(white) / Double(max(1, ink)), 0.8, "\(format): ink is white")
            XCTAssertGreaterThan(Double(darker) / Double(max(1, box)), 0.9, "\(format): the box")
        }
    }

    /// 26 frames in the fixture's first second (the stamp's second), at 30 fps.
    private func record(_ scene: Frame, overlay: TextOverlay?) throws -> String {
        var s = RecordingSettings(preset: "ultrafast", crf: 14, audioChannels: 0)
        s.queueFrames = 400
        s.overlay = overlay
        let dir = RecordingProbe.tempDir("overlay")
        let start = OverlayFixture.start
        let recorder = try Recorder(settings: s, start: start, nextPath: { "\(dir)/clip.mp4" })
        for i in 0..<26 {
            let f = Frame(width: scene.width, height: scene.height, format: scene.format, planes: scene.planes,
                          timestamp: start + .milliseconds(Int64(i) * 1000 / 30), sequence: UInt64(i),
                          onRelease: { withExtendedLifetime(scene) {} })
            XCTAssertTrue(recorder.appendWaiting(f))
        }
        let summary = recorder.finish()
        XCTAssertNil(summary.error)
        return try XCTUnwrap(summary.paths.first)
    }

    /// Every frame's luma as ffmpeg decodes the clip (yuv420p: the planes as coded).
    private func decodedLuma(_ path: String, width: Int, height: Int) throws -> [[UInt8]] {
        let r = try StillTools.run(["ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        XCTAssertEqual(r.status, 0, r.err)
        let frameBytes = width * height * 3 / 2
        let data = [UInt8](r.out)
        XCTAssertEqual(data.count, 26 * frameBytes)
        return (0..<data.count / frameBytes).map { Array(data[$0 * frameBytes..<$0 * frameBytes + width * height]) }
    }
}
