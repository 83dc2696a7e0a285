// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import ShutterMedia
import XCTest

/// The time stamp in the live stream: the real shutterd on the simulated board, pre-roll off
/// (the live encoder of its own), an RTSP viewer's frames decoded by ffmpeg. Whether the time
/// is drawn depends on this machine's clock, so the check is the name, which is drawn either
/// way at the same place (bottom left: the box's height and the name's glyphs do not depend on
/// what follows them).
final class OverlayLiveTests: XCTestCase {
    func testTheLiveStreamCarriesTheStamp() throws {
        let d = try DaemonHarness(config: """
            {"video": {"width": 640, "height": 360, "fps": 30},
             "overlay": {"enabled": true, "name": "Shed", "position": "bottom-left", "size": 8},
             "live": {"rtsp": {"enabled": true, "listen": "127.0.0.1:0", "open": true}}}
            """)
        try d.start()
        defer { d.stop() }
        let url = try LiveRTSPTests.rtspBase(d) + "/live"
        let out = d.dir + "/viewer.grey"
        let (code, _, err) = try runTool("timeout", ["30", "ffmpeg", "-v", "error", "-rtsp_transport", "tcp", "-i", url,
                                                     "-ss", "1", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray",
                                                     "-y", out])
        XCTAssertEqual(code, 0, err + d.log())
        let luma = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        XCTAssertEqual(luma.count, 640 * 360)

        var style = ShutterConfig().overlay
        style.name = "Shed"
        style.position = .bottomLeft
        style.size = 8
        let nameOnly = TextOverlay(style: .init(style), font: try OverlayFont(path: style.font), clock: ManualClock(),
                                   wallClock: FixedWallClock(WallTime(secondsSinceEpoch: 0, isTrusted: false)))
        let p = try XCTUnwrap(nameOnly.placed(at: .milliseconds(0), width: 640, height: 360))
        XCTAssertEqual(p.stamp.text, "Shed")
        var ink = 0, white = 0, box = 0, dark = 0
        for r in 0..<p.stamp.height {
            for c in 0..<p.stamp.width {
                let i: Int = (p.y + r) * 640 + p.x + c
                let v = Int(luma[i])
                let a: UInt8 = p.stamp.alpha[r * p.stamp.width + c]
                if a == 255 { ink += 1; if v >= 190 { white += 1 } }
                // The box left of the name (its margin), far from any glyph.
                let margin: Int = p.stamp.height / 5 - 2
                if c < margin { box += 1; if v <= 136 { dark += 1 } }
            }
        }
        XCTAssertGreaterThan(ink, 100)
        XCTAssertGreaterThan(Double(white) / Double(ink), 0.8, "the name's ink is white in the live frame")
        XCTAssertGreaterThan(Double(dark) / Double(max(1, box)), 0.95, "the box behind it")
    }
}
