// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import XCTest
@testable import ShutterMedia

/// The time stamp in a photo, read back from the JPEG as ffmpeg decodes it: the stamp's
/// rectangle against the renderer's own bitmap blended into the same frame, and the rest of
/// the picture against the same frame encoded without the stamp.
final class OverlayStillTests: XCTestCase {
    func testTheStampIsInTheJPEGAndNothingElseChanges() throws {
        for format in [PixelFormat.i420, .nv12] {
            try check(format, width: 1280, height: 720)
        }
        // Widths that are not whole JPEG blocks (luma and chroma rows copied and padded).
        try check(.i420, width: 1000, height: 562)
    }

    private func check(_ format: PixelFormat, width w: Int, height h: Int,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let dir = try StillTools.tempDir(self)
        let frame = StillPattern.scene(format, width: w, height: h)
        let overlay = try OverlayFixture.overlay()
        let placed = try XCTUnwrap(overlay.placed(at: OverlayFixture.start, width: w, height: h))
        XCTAssertEqual(placed.stamp.text, "Shed  2026-06-01 12:00:00", file: file, line: line)
        let encoder = try StillEncoder()
        let stamped = try encoder.encode(frame, metadata: StillMetadata(), stamp: placed)
        let blank = try encoder.encode(frame, metadata: StillMetadata(), stamp: OverlayFixture.blank(like: placed))
        let plain = try encoder.encode(frame, metadata: StillMetadata())
        let planes = try OverlayFixture.decodeJPEG(stamped.jpeg, dir: dir, name: "stamped")
        let got = Array(planes.prefix(w * h))
        let without = try OverlayFixture.decodeJPEGLuma(blank.jpeg, width: w, height: h, dir: dir, name: "blank")
        let turbo = try OverlayFixture.decodeJPEGLuma(plain.jpeg, width: w, height: h, dir: dir, name: "plain")
        let want = OverlayFixture.expectedLuma(frame, placed)
        let original = OverlayFixture.luma(frame)
        let xs = placed.x..<(placed.x + placed.stamp.width), ys = placed.y..<(placed.y + placed.stamp.height)

        // In the stamp: what the renderer drew, within JPEG's error at quality 93, and far from the picture without it.
        let inside = OverlayFixture.meanDiff(got, want, width: w, height: h, x: xs, y: ys)
        let changed = OverlayFixture.meanDiff(want, original, width: w, height: h, x: xs, y: ys)
        XCTAssertLessThan(inside, 4, "\(format) \(w)x\(h): the stamp's pixels", file: file, line: line)
        XCTAssertGreaterThan(changed, 25, "\(format): the stamp changes its rectangle", file: file, line: line)
        // Ink is white, the box darker than the picture.
        var ink = 0, inkBright = 0
        for r in ys { for c in xs where placed.stamp.alpha[(r - placed.y) * placed.stamp.width + c - placed.x] == 255 {
            ink += 1
            if got[r * w + c] >= 200 { inkBright += 1 }
        } }
        XCTAssertGreaterThan(ink, 500, file: file, line: line)
        XCTAssertGreaterThan(Double(inkBright) / Double(ink), 0.8, "\(format): ink decodes white", file: file, line: line)
        // No colour under ink: U and V near 128 where all four luma pixels are ink (the scene's U is 60...200).
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        var inkChroma = 0, neutral = 0
        for r in (placed.y / 2)..<((placed.y + placed.stamp.height) / 2) {
            for c in (placed.x / 2)..<((placed.x + placed.stamp.width) / 2) {
                let ar = 2 * r - placed.y, ac = 2 * c - placed.x, sw = placed.stamp.width
                let a = placed.stamp.alpha
                guard a[ar * sw + ac] == 255, a[ar * sw + ac + 1] == 255, a[(ar + 1) * sw + ac] == 255,
                      a[(ar + 1) * sw + ac + 1] == 255 else { continue }
                inkChroma += 1
                let u = Int(planes[w * h + r * cw + c]), v = Int(planes[w * h + cw * ch + r * cw + c])
                if abs(u - 128) <= 12 && abs(v - 128) <= 12 { neutral += 1 }
            }
        }
        XCTAssertGreaterThan(inkChroma, 50, file: file, line: line)
        XCTAssertGreaterThan(Double(neutral) / Double(max(1, inkChroma)), 0.8, "\(format): ink has no colour",
                             file: file, line: line)

        // Outside the JPEG blocks the stamp touches (16-pixel MCUs): the same decoded pixels, exactly.
        let bx = (placed.x / 16 * 16)..<min(w, (placed.x + placed.stamp.width + 15) / 16 * 16)
        let by = (placed.y / 16 * 16)..<min(h, (placed.y + placed.stamp.height + 15) / 16 * 16)
        var differing = 0
        for r in 0..<h { for c in 0..<w where !(bx.contains(c) && by.contains(r)) && got[r * w + c] != without[r * w + c] {
            differing += 1
        } }
        XCTAssertEqual(differing, 0, "\(format) \(w)x\(h): pixels changed outside the stamp", file: file, line: line)
        // The stamped path without a stamp encodes as TurboJPEG's own path does.
        XCTAssertLessThanOrEqual(OverlayFixture.meanDiff(without, turbo, width: w, height: h, x: 0..<0, y: 0..<0,
                                                         outside: true), 0.01, "\(format): raw rows vs TurboJPEG",
                                 file: file, line: line)
    }

    func testEveryCornerAndTheSizeFollowThePicture() throws {
        let w = 1920, h = 1080
        for position in ShutterConfig.Overlay.Position.allCases {
            let p = try XCTUnwrap(OverlayFixture.overlay(size: 4, position: position).placed(at: OverlayFixture.start, width: w, height: h))
            let m = 43 / 2 & ~1  // half the text height (4% of 1080 = 43), even
            XCTAssertEqual(p.x, position.rawValue.hasSuffix("left") ? m : (w - m - p.stamp.width) & ~1, position.rawValue)
            XCTAssertEqual(p.y, position.rawValue.hasPrefix("top") ? m : (h - m - p.stamp.height) & ~1, position.rawValue)
        }
        let small = try XCTUnwrap(OverlayFixture.overlay(size: 4).placed(at: OverlayFixture.start, width: w, height: h))
        let big = try XCTUnwrap(OverlayFixture.overlay(size: 4).placed(at: OverlayFixture.start, width: 4608, height: 2592))
        XCTAssertEqual(Double(big.stamp.height) / Double(small.stamp.height), 2592.0 / 1080, accuracy: 0.15)
        // Too wide for the picture at the asked size: drawn smaller, inside it.
        let narrow = try XCTUnwrap(OverlayFixture.overlay(size: 20).placed(at: OverlayFixture.start, width: 640, height: 480))
        XCTAssertLessThanOrEqual(narrow.x + narrow.stamp.width, 640)
    }
}

/// The packed formats (vimc's RGB, a webcam's YUYV): the stamp in the JPEG, and the rest of
/// the picture as the same frame encoded without it.
final class OverlayPackedTests: XCTestCase {
    func testRGBBGRAndYUYVPhotosCarryTheStamp() throws {
        let w = 640, h = 480
        for format in [PixelFormat.rgb24, .bgr24, .yuyv] {
            let dir = try StillTools.tempDir(self)
            let frame = StillPattern.frame(format, width: w, height: h)
            let before = [UInt8](UnsafeRawBufferPointer(start: frame.planes[0].base, count: frame.planes[0].length))
            let placed = try XCTUnwrap(OverlayFixture.overlay().placed(at: OverlayFixture.start, width: w, height: h))
            let encoder = try StillEncoder()
            let stamped = try encoder.encode(frame, metadata: StillMetadata(), stamp: placed)
            let plain = try encoder.encode(frame, metadata: StillMetadata())
            XCTAssertEqual([UInt8](UnsafeRawBufferPointer(start: frame.planes[0].base, count: frame.planes[0].length)),
                           before, "\(format): the camera's frame is not written")
            let got = try OverlayFixture.decodeJPEGLuma(stamped.jpeg, width: w, height: h, dir: dir, name: "s")
            let without = try OverlayFixture.decodeJPEGLuma(plain.jpeg, width: w, height: h, dir: dir, name: "p")
            let s = placed.stamp
            var ink = 0, white = 0, box = 0, darker = 0
            for r in 0..<s.height {
                for c in 0..<s.width {
                    let i = (placed.y + r) * w + placed.x + c
                    let a = s.alpha[r * s.width + c]
                    if a == 255 { ink += 1; if got[i] >= 200 { white += 1 } }
                    if c < s.height / 5 - 2 { box += 1; if Int(got[i]) < Int(without[i]) - 30 { darker += 1 } }
                }
            }
            XCTAssertGreaterThan(Double(white) / Double(max(1, ink)), 0.8, "\(format): ink is white")
            XCTAssertGreaterThan(Double(darker) / Double(max(1, box)), 0.9, "\(format): the box darkens the grey")
            let bx = (placed.x / 16 * 16)..<((placed.x + s.width + 15) / 16 * 16)
            let by = (placed.y / 16 * 16)..<((placed.y + s.height + 15) / 16 * 16)
            var differing = 0
            for r in 0..<h { for c in 0..<w where !(bx.contains(c) && by.contains(r)) && got[r * w + c] != without[r * w + c] {
                differing += 1
            } }
            XCTAssertEqual(differing, 0, "\(format): pixels changed outside the stamp")
        }
    }
}
