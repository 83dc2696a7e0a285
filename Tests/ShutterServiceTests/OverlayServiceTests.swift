// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
import ShutterMedia
import ShutterSim
@testable import ShutterService

/// The time stamp through the whole service on the simulated board (InProcessRig, the
/// manual clock): a `tap`'s photo and a `hold`'s clip carry the stamp of their frame's
/// second, read back from the files; the same tap without the overlay gives the same
/// picture outside the stamp.
final class OverlayServiceTests: XCTestCase {
    /// 2026-06-01 12:00:00 UTC at the rig's start; the wall clock moves with the manual clock.
    static let epoch: Int64 = 1_780_315_200
    static let startMs: Int64 = 1_000_000

    struct FollowingWallClock: WallClock {
        let clock: ManualClock
        let trusted: Bool
        func now() -> WallTime {
            WallTime(secondsSinceEpoch: OverlayServiceTests.epoch, isTrusted: trusted)
                .adding(clock.now() - .milliseconds(OverlayServiceTests.startMs))
        }
    }

    private func json(overlay: Bool, preroll: Int = 0) -> String {
        #"{"video": {"width": 640, "height": 360, "fps": 30, "prerollSeconds": \#(preroll)}, "#
            + #""still": {"width": 1280, "height": 720, "moment": "press"}, "#
            + #""audio": {"enabled": false}, "sim": {"stillStream": [1280, 720]}, "#
            + #""overlay": {"enabled": \#(overlay), "name": "Shed", "size": 6}}"#
    }

    private func rig(overlay: Bool, trusted: Bool = true, preroll: Int = 0) async throws -> InProcessRig {
        let clock = ManualClock(start: .milliseconds(Self.startMs))
        return try await InProcessRig.start(self, json: json(overlay: overlay, preroll: preroll), clock: clock,
                                            wallClock: FollowingWallClock(clock: clock, trusted: trusted))
    }

    /// Y (then U, V) of a picture as ffmpeg decodes it, and the simulated camera's label in it.
    private func decode(_ path: String, width: Int, height: Int) throws -> (luma: [UInt8], label: (frame: UInt64, millis: Int64)) {
        let (code, _, err) = try runTool("ffmpeg", ["-v", "error", "-y", "-i", path, "-frames:v", "1", "-f", "rawvideo",
                                                    "-pix_fmt", "gray", path + ".grey"])
        XCTAssertEqual(code, 0, err)
        let luma = Array(try Data(contentsOf: URL(fileURLWithPath: path + ".grey")))
        XCTAssertEqual(luma.count, width * height)
        let label = try XCTUnwrap(BurnedInLabel.read(luma: luma, width: width, height: height), "label in \(path)")
        return (luma, label)
    }

    /// The renderer's own stamp for the second a frame exposed at `millis` (service clock) falls in.
    private func expected(millis: Int64, width: Int, height: Int, config: ShutterConfig.Overlay) throws -> OverlayStamp.Placed {
        let second = Self.epoch + (millis - Self.startMs) / 1000
        let o = TextOverlay(style: .init(config), font: try OverlayFont(path: config.font), clock: ManualClock(),
                            wallClock: FixedWallClock(WallTime(secondsSinceEpoch: second, isTrusted: true)))
        return try XCTUnwrap(o.placed(at: .milliseconds(0), width: width, height: height))
    }

    /// Ink reads white, the box around it darker than any unboxed picture could be.
    private func checkStamp(_ luma: [UInt8], width: Int, _ p: OverlayStamp.Placed, _ what: String) {
        let s = p.stamp
        var ink = 0, white = 0, box = 0, dark = 0
        for r in 0..<s.height {
            for c in 0..<s.width {
                let v = Int(luma[(p.y + r) * width + p.x + c])
                if s.alpha[r * s.width + c] == 255 { ink += 1; if v >= 190 { white += 1 } }
                // Box only, three pixels from any ink: at most half of 255 (and the codec's error).
                let near = (max(0, r - 3)...min(s.height - 1, r + 3)).contains { rr in
                    (max(0, c - 3)...min(s.width - 1, c + 3)).contains { s.alpha[rr * s.width + $0] > 0 }
                }
                if !near { box += 1; if v <= 136 { dark += 1 } }
            }
        }
        XCTAssertGreaterThan(ink, 200, what)
        XCTAssertGreaterThan(Double(white) / Double(ink), 0.8, "\(what): the text \"\(s.text)\" is in the picture")
        XCTAssertGreaterThan(Double(dark) / Double(max(1, box)), 0.95, "\(what): the box behind it")
    }

    func testAPhotoCarriesTheStampOfItsSecondAndNothingElseChanges() async throws {
        var photos: [(luma: [UInt8], label: (frame: UInt64, millis: Int64))] = []
        for on in [true, false] {
            let d = try await rig(overlay: on)
            await d.advance(by: .milliseconds(2300))
            let r = try await d.ask(ControlRequest(cmd: "tap"))
            XCTAssertTrue(r.ok, "\(r)")
            photos.append(try decode(try XCTUnwrap(r.files?.first), width: 1280, height: 720))
            let overlay = await d.status().overlay
            XCTAssertEqual(overlay?.timeDrawn, on ? true : nil, "status.overlay: absent when off")
            if on {
                XCTAssertGreaterThan(overlay?.renderedAhead ?? 0, 0, "seconds rendered ahead of their frames")
                XCTAssertEqual(overlay?.renderedOnMiss, 0, "the photo's and the clip's stamps were ready ahead")
            }
        }
        let (stamped, plain) = (photos[0], photos[1])
        XCTAssertEqual(stamped.label.frame, plain.label.frame, "the same frame with and without the overlay")
        let p = try expected(millis: stamped.label.millis, width: 1280, height: 720, config: ShutterConfig().overlay.named("Shed", size: 6))
        XCTAssertEqual(p.stamp.text, "Shed  2026-06-01 12:00:02")
        checkStamp(stamped.luma, width: 1280, p, "photo")
        // Outside the JPEG blocks the stamp touches: the same pixels.
        let bx = (p.x / 16 * 16)..<((p.x + p.stamp.width + 15) / 16 * 16)
        let by = (p.y / 16 * 16)..<((p.y + p.stamp.height + 15) / 16 * 16)
        var differing = 0
        for r in 0..<720 { for c in 0..<1280 where !(bx.contains(c) && by.contains(r)) {
            if abs(Int(stamped.luma[r * 1280 + c]) - Int(plain.luma[r * 1280 + c])) > 1 { differing += 1 }
        } }
        XCTAssertEqual(differing, 0, "pixels changed outside the stamp")
    }

    func testAClipsFramesCarryTheStamp() async throws {
        try await checkClip(preroll: 0)
    }

    /// With pre-roll the clip is the always-running encoder's packets, from before the press.
    func testAPrerollClipsFramesCarryTheStamp() async throws {
        try await checkClip(preroll: 1)
    }

    private func checkClip(preroll: Int) async throws {
        let d = try await rig(overlay: true, preroll: preroll)
        await d.advance(by: .milliseconds(1700))
        let r = try await d.ask(ControlRequest(cmd: "hold", seconds: 2))
        XCTAssertTrue(r.ok, "\(r)")
        let clip = try XCTUnwrap(r.files?.first { $0.hasSuffix(".MP4") })
        let first = try decode(clip, width: 640, height: 360)
        let p = try expected(millis: first.label.millis, width: 640, height: 360, config: ShutterConfig().overlay.named("Shed", size: 6))
        XCTAssertTrue(p.stamp.text.hasPrefix("Shed  2026-06-01 12:00:0"), p.stamp.text)
        checkStamp(first.luma, width: 640, p, "the clip's first frame")
    }

    func testAnUntrustedClockDrawsTheNameButNoTime() async throws {
        let d = try await rig(overlay: true, trusted: false)
        let r = try await d.ask(ControlRequest(cmd: "tap"))
        let status = await d.status()
        XCTAssertEqual(status.overlay?.timeDrawn, false, "status says the time is not drawn")
        let photo = try decode(try XCTUnwrap(r.files?.first), width: 1280, height: 720)
        var config = ShutterConfig().overlay.named("Shed", size: 6)
        config.format = "%Y"
        let timed = try expected(millis: photo.label.millis, width: 1280, height: 720, config: config)
        let o = TextOverlay(style: .init(config), font: try OverlayFont(path: config.font), clock: ManualClock(),
                            wallClock: FixedWallClock(WallTime(secondsSinceEpoch: Self.epoch, isTrusted: false)))
        let nameOnly = try XCTUnwrap(o.placed(at: .milliseconds(0), width: 1280, height: 720))
        XCTAssertEqual(nameOnly.stamp.text, "Shed")
        checkStamp(photo.luma, width: 1280, nameOnly, "the name")
        XCTAssertLessThan(nameOnly.stamp.width, timed.stamp.width)
    }
}

private extension ShutterConfig.Overlay {
    func named(_ name: String, size: Int) -> Self {
        var c = self
        c.enabled = true
        c.name = name
        c.size = size
        return c
    }
}
