// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterSim
import ShutterWeb
import XCTest

/// The page's live H.264 (`/api/live.mp4`) on the real shutterd: headless chromium plays it
/// through Media Source Extensions (Tests/web/test_live_browser.py) and the frame it shows
/// carries the simulated camera's burned-in label; ffmpeg reads the same URL with a token.
final class LiveWebTests: XCTestCase {
    func startDaemon(prerollSeconds: Int = 2) throws -> (DaemonHarness, String) {
        let hash = try XCTUnwrap(PasswordHash.make(WebScripts.password))
        let d = try DaemonHarness(config: """
            {"web": {"enabled": true, "listen": "127.0.0.1:0", "passwordHash": "\(hash)"},
             "video": {"width": 1280, "height": 720, "prerollSeconds": \(prerollSeconds)}}
            """)
        try d.start()
        return (d, try WebScripts.url(d))
    }

    /// The label read back from the luma rows the script saved ("W H\n" then W×H bytes).
    static func label(_ path: String) throws -> (frame: UInt64, millis: Int64)? {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let nl = data.firstIndex(of: 10) else { return nil }
        let dims = String(decoding: data[..<nl], as: UTF8.self).split(separator: " ").compactMap { Int($0) }
        guard dims.count == 2 else { return nil }
        let luma = Array(data[(nl + 1)...])
        // The label's scale follows the frame's height (TestPattern): give the full height.
        return BurnedInLabel.read(luma: luma, width: dims[0], height: dims[1] * 8, stride: dims[0])
    }

    func testChromiumPlaysTheLiveH264() throws {
        guard FileManager.default.fileExists(atPath: "/usr/bin/chromedriver") else {
            throw XCTSkip("Debian's chromium-driver is not installed (make test-deps)")
        }
        let (d, url) = try startDaemon()
        defer { d.stop() }
        let (code, text) = try WebScripts.run("test_live_browser.py", d, url)
        XCTAssertEqual(code, 0, "\(text)\nshutterd log:\n\(d.log().suffix(3000))")
        XCTAssertTrue(text.contains("checks passed"))
        let out = URL(fileURLWithPath: WebScripts.dir).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build").path
        let label = try XCTUnwrap(try Self.label(out + "/web-live-label.gray"), "the burned-in label in the frame chromium shows")
        XCTAssertGreaterThan(label.frame, 0)
        let live = try XCTUnwrap((try d.status()["preview"] as? [String: Any])?["live"] as? [String: Any])
        XCTAssertGreaterThan(live["pageFramesSent"] as? Int ?? 0, 30, "\(live)")
        print("live-page: chromium showed frame \(label.frame); \(live)")
    }

    /// Another player than a browser reads the same stream with a view token (HTTP Basic).
    func testFFmpegReadsLiveMP4WithAToken() throws {
        let (d, url) = try startDaemon(prerollSeconds: 0)
        defer { d.stop() }
        let token = try LiveRTSPTests.addToken(d, "player")
        let src = url.replacingOccurrences(of: "http://", with: "http://viewer:\(token)@") + "/api/live.mp4"
        let out = d.dir + "/page.mp4"
        let (code, _, err) = try runTool("timeout", ["30", "ffmpeg", "-v", "error", "-i", src, "-t", "3", "-c", "copy", "-y", out])
        XCTAssertEqual(code, 0, err)
        let packets = try LiveRTSPTests.videoPackets(out)
        XCTAssertEqual(packets.first?.key, true)
        XCTAssertGreaterThan(packets.count, 30, "3 s of video")
        XCTAssertTrue(zip(packets, packets.dropFirst()).allSatisfy { $0.pts < $1.pts }, "rising timestamps")
        let live = try XCTUnwrap((try d.status()["preview"] as? [String: Any])?["live"] as? [String: Any])
        XCTAssertEqual(live["ownEncoder"] as? Bool, true, "pre-roll off: an encoder of its own while watched")
        try d.waitFor("its own encoder to stop once nobody watches", timeout: 15) {
            ((try d.status()["preview"] as? [String: Any])?["live"] as? [String: Any])?["ownEncoder"] as? Bool == false
        }
    }
}
