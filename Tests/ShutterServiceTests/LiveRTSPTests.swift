// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterWeb
import XCTest

/// The live RTSP stream of the real shutterd (simulated board) against clients that are
/// not ours: ffprobe, ffmpeg, VLC. Frame counts are compared with what the service says it
/// sent (status counters.live), never with the wall clock.
final class LiveRTSPTests: XCTestCase {
    static let password = WebScripts.password

    /// shutterd with the page's password set (so RTSP may start), RTSP on any free port.
    static func startDaemon(_ extra: String = "", prerollSeconds: Int = 2) throws -> (DaemonHarness, String) {
        let hash = try XCTUnwrap(PasswordHash.make(Self.password))
        let d = try DaemonHarness(config: """
            {"web": {"enabled": true, "listen": "127.0.0.1:0", "passwordHash": "\(hash)"},
             "video": {"width": 1280, "height": 720, "prerollSeconds": \(prerollSeconds)},
             "live": {"rtsp": {"enabled": true, "listen": "127.0.0.1:0"}\(extra)}}
            """)
        try d.start()
        return (d, try Self.rtspBase(d))
    }

    /// "rtsp://127.0.0.1:PORT" from the daemon's log.
    static func rtspBase(_ d: DaemonHarness) throws -> String {
        var base = ""
        try d.waitFor("the RTSP address", timeout: 10) {
            guard let r = d.log().ranges(of: #/live video on rtsp://127\.0\.0\.1:[0-9]+/#).last else { return false }
            base = String(d.log()[r].dropFirst("live video on ".count))
            return true
        }
        return base
    }

    static func addToken(_ d: DaemonHarness, _ name: String, scope: String = "view") throws -> String {
        let (code, out, err) = try runTool(DaemonHarness.binDir + "/shutterctl",
                                           ["--socket", d.socket, "web-token", "add", name, "--scope", scope])
        XCTAssertEqual(code, 0, err)
        return out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func live(_ d: DaemonHarness) throws -> [String: Any] {
        try XCTUnwrap((try d.status()["preview"] as? [String: Any])?["live"] as? [String: Any])
    }

    /// ffprobe of a live URL: its streams (codec_type → (codec, width, height)); nil when refused.
    static func probeStream(_ url: String) throws -> [String: (codec: String, width: Int, height: Int)]? {
        let (code, out, _) = try runTool("timeout", ["20", "ffprobe", "-v", "error", "-rtsp_transport", "tcp",
                                                     "-show_entries", "stream=codec_type,codec_name,width,height",
                                                     "-of", "json", url])
        guard code == 0 else { return nil }
        let obj = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any] ?? [:]
        var streams: [String: (String, Int, Int)] = [:]
        for s in obj["streams"] as? [[String: Any]] ?? [] {
            streams[s["codec_type"] as? String ?? "?"] = (s["codec_name"] as? String ?? "?", s["width"] as? Int ?? 0,
                                                          s["height"] as? Int ?? 0)
        }
        return streams
    }

    /// Video packets' times and key flags of a file, in file order.
    static func videoPackets(_ path: String, stream: String = "v") throws -> [(pts: Double, key: Bool)] {
        let (_, out, _) = try runTool("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries",
                                                  "packet=pts_time,flags", "-of", "csv=p=0", path])
        return out.split(separator: "\n").compactMap { line in
            let f = line.split(separator: ",")
            guard f.count >= 2, let t = Double(f[0]) else { return nil }
            return (t, f[1].contains("K"))
        }
    }

    /// The done-when: H.264 at the configured size and AAC (ffprobe); `ffmpeg -rtsp_transport
    /// tcp -t 10 -c copy` gives 10 s of H.264 with >= 95 % of the frames the service sent
    /// meanwhile and rising timestamps; a wrong token, a revoked one and no password are
    /// refused; the page's password is taken too.
    func testRTSPStreamWithTokens() throws {
        let (d, base) = try Self.startDaemon()
        defer { d.stop() }
        let token = try Self.addToken(d, "nvr")
        let url = base.replacingOccurrences(of: "rtsp://", with: "rtsp://viewer:\(token)@") + "/live"

        let streams = try XCTUnwrap(try Self.probeStream(url), "ffprobe with a view token; log:\n\(d.log())")
        XCTAssertEqual(streams["video"]?.codec, "h264")
        XCTAssertEqual(streams["video"]?.width, 1280)
        XCTAssertEqual(streams["video"]?.height, 720)
        XCTAssertEqual(streams["audio"]?.codec, "aac", "the simulated microphone runs: AAC beside the video")

        let out = d.dir + "/out.mp4"
        let before = try Self.live(d), t0 = try d.status()["uptimeSeconds"] as? Double ?? 0
        let (code, _, err) = try runTool("timeout", ["40", "ffmpeg", "-v", "error", "-rtsp_transport", "tcp", "-i", url,
                                                     "-t", "10", "-c", "copy", "-y", out])
        XCTAssertEqual(code, 0, err)
        let after = try Self.live(d), t1 = try d.status()["uptimeSeconds"] as? Double ?? 0
        let sent = (after["rtspFramesSent"] as? Int ?? 0) - (before["rtspFramesSent"] as? Int ?? 0)
        let rate = Double(sent) / max(0.001, t1 - t0)  // frames a second the service sent while ffmpeg read
        let packets = try Self.videoPackets(out)
        let p = try probe(out)
        let duration = p.streams["video"]?.duration ?? 0
        XCTAssertEqual(p.streams["video"]?.codec, "h264")
        XCTAssertEqual(duration, 10, accuracy: 0.5, "ffmpeg -t 10: a 10 s file")
        XCTAssertGreaterThanOrEqual(Double(packets.count), 0.95 * rate * duration,
                                    "\(packets.count) frames in \(duration) s; the service sent \(sent) at \(rate)/s")
        XCTAssertEqual(packets.first?.key, true, "the file starts at a keyframe")
        XCTAssertTrue(zip(packets, packets.dropFirst()).allSatisfy { $0.pts < $1.pts }, "rising timestamps")
        let audio = try Self.videoPackets(out, stream: "a")
        XCTAssertGreaterThan(audio.count, 300, "AAC all along (~47 packets a second at 48 kHz)")
        XCTAssertTrue(zip(audio, audio.dropFirst()).allSatisfy { $0.pts < $1.pts }, "rising audio timestamps")
        print("live-rtsp: \(packets.count) frames in \(duration) s (done-when: >= 285), service sent \(sent) at "
              + String(format: "%.1f", rate) + "/s, dropped \(after["rtspFramesDropped"] ?? 0)")

        // Refused: a wrong token, no password, then the token once revoked. The page's password works.
        let wrong = base.replacingOccurrences(of: "rtsp://", with: "rtsp://viewer:not-a-token@") + "/live"
        XCTAssertNil(try Self.probeStream(wrong), "a wrong token is refused")
        XCTAssertNil(try Self.probeStream(base + "/live"), "no password is refused")
        Thread.sleep(forTimeInterval: 1.1)  // one password tried a second (the wrong token was tried as one)
        let withPassword = base.replacingOccurrences(
            of: "rtsp://", with: "rtsp://me:\(Self.password.replacingOccurrences(of: " ", with: "%20"))@") + "/live"
        XCTAssertEqual(try Self.probeStream(withPassword)?["video"]?.codec, "h264", "the page's password")
        let (rc, _, rerr) = try runTool(DaemonHarness.binDir + "/shutterctl", ["--socket", d.socket, "web-token", "revoke", "nvr"])
        XCTAssertEqual(rc, 0, rerr)
        XCTAssertNil(try Self.probeStream(url), "a revoked token is refused at once")
        XCTAssertGreaterThanOrEqual(try Self.live(d)["rtspRefused"] as? Int ?? 0, 2, "the wrong and the revoked token (no password at all is asked for one, not counted)")
    }

    /// RTSP on, nothing a viewer could log in with, not open: shutterd does not start (78,
    /// naming the key); with live.rtsp.open it does.
    func testRefusesToStartWithoutAPasswordUnlessOpen() throws {
        let d = try DaemonHarness(config: #"{"live": {"rtsp": {"enabled": true, "listen": "127.0.0.1:0"}}}"#)
        try d.start(waitReady: false)
        XCTAssertEqual(d.waitExit(timeout: 20), 78, d.log())
        XCTAssertTrue(d.log().contains("live.rtsp.open"), d.log())

        let o = try DaemonHarness(config: #"{"live": {"rtsp": {"enabled": true, "listen": "127.0.0.1:0", "open": true}}}"#)
        try o.start()
        defer { o.stop() }
        let base = try Self.rtspBase(o)
        XCTAssertEqual(try Self.probeStream(base + "/live")?["video"]?.codec, "h264", "open: no password asked")
    }
}
