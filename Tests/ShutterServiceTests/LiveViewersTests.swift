// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// Bounded RTSP viewers on the real shutterd: a fifth is refused while four watch, a tap
/// while they watch is still taken at the press, a viewer that stops reading is closed and
/// the memory it held comes back; VLC plays the stream headless.
final class LiveViewersTests: XCTestCase {
    /// ffmpeg reading `url` and throwing the frames away, until stopped.
    func reader(_ url: String, seconds: Int = 120) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        p.arguments = ["-v", "error", "-rtsp_transport", "tcp", "-i", url, "-t", "\(seconds)", "-c", "copy", "-f", "null", "-"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        return p
    }

    func end(_ p: Process) {
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
    }

    /// The service's own figure: bytes malloc has handed out and not had back (what a viewer's
    /// backlog holds). RSS is not used: glibc keeps freed pages, so it moves by megabytes
    /// with nothing held.
    static func heap(_ d: DaemonHarness) throws -> Int {
        try XCTUnwrap((try d.status()["memory"] as? [String: Any])?["heapBytes"] as? Int)
    }

    func viewers(_ d: DaemonHarness) throws -> Int { try LiveRTSPTests.live(d)["rtspViewers"] as? Int ?? -1 }

    func tapMoment(_ d: DaemonHarness) throws -> Double {
        let before = try d.counters()["photos"] ?? 0
        XCTAssertEqual(try d.ctl("tap").0, 0)
        try d.waitFor("the photo", timeout: 20) { (try d.counters()["photos"] ?? 0) > before }
        let photo = try XCTUnwrap(try d.status()["lastPhoto"] as? [String: Any])
        return try XCTUnwrap(photo["pressToExposureMs"] as? Double)
    }

    func testFifthViewerRefusedTapAtThePressStalledViewerDropped() throws {
        let (d, base) = try LiveRTSPTests.startDaemon()
        defer { d.stop() }
        let token = try LiveRTSPTests.addToken(d, "nvr")
        let url = base.replacingOccurrences(of: "rtsp://", with: "rtsp://viewer:\(token)@") + "/live"
        let alone = try tapMoment(d)

        // Four watch; a fifth is refused (503); a tap is taken at the press all the same.
        var readers: [Process] = []
        defer { readers.forEach(end) }
        for _ in 0..<4 { readers.append(try reader(url)) }
        try d.waitFor("four RTSP viewers", timeout: 30) { try viewers(d) == 4 }
        let (code, _, err) = try runTool("timeout", ["20", "ffprobe", "-v", "error", "-rtsp_transport", "tcp", url])
        XCTAssertNotEqual(code, 0, "a fifth viewer is refused")
        XCTAssertTrue(err.contains("503"), "refused as Service Unavailable: \(err)")
        XCTAssertEqual(try viewers(d), 4)
        let watched = try tapMoment(d)
        print("live-viewers: press to exposure \(alone) ms alone, \(watched) ms while 4 watch")
        XCTAssertLessThanOrEqual(abs(alone), 34, "the frame exposed at the press (one frame period)")
        XCTAssertLessThanOrEqual(abs(watched), 34, "still the frame at the press while four watch")
        for r in readers { kill(r.processIdentifier, SIGTERM); r.waitUntilExit() }  // ffmpeg's TEARDOWN
        readers = []
        try d.waitFor("the viewers gone", timeout: 30) { try viewers(d) == 0 }

        // One that stops reading (SIGSTOP) is closed; what it held is given back. Twice: the
        // first leaves GStreamer's pools and caches grown, so what a stalled viewer keeps is
        // what the second adds to the first.
        func stallOne(_ n: Int) throws -> Int {
            let stuck = try reader(url)
            readers.append(stuck)
            try d.waitFor("one viewer", timeout: 30) { try viewers(d) == 1 }
            kill(stuck.processIdentifier, SIGSTOP)
            try d.waitFor("the stalled viewer closed", timeout: 40) {
                try LiveRTSPTests.live(d)["rtspStalledClosed"] as? Int == n
            }
            kill(stuck.processIdentifier, SIGKILL)
            try d.waitFor("no viewer", timeout: 30) { try viewers(d) == 0 }  // its session expires (10 s)
            Thread.sleep(forTimeInterval: 2)
            return try Self.heap(d)
        }
        let heapBefore = try Self.heap(d)
        let heapFirst = try stallOne(1)
        let heapSecond = try stallOne(2)
        print("live-viewers: heap in use \(heapBefore / 1024) KiB before a stalled viewer, \(heapFirst / 1024) KiB after the "
              + "first was closed, \(heapSecond / 1024) KiB after a second")
        XCTAssertLessThan(heapSecond - heapFirst, 8 << 20, "a stalled viewer's memory comes back (a second keeps under 8 MB)")
    }

    /// VLC (cvlc, headless) decodes the live stream for 5 s: its scene filter writes decoded
    /// frames. Debian's VLC has no RTSP client (live555 is not in Debian), so it plays the
    /// same encoder's stream as the page gets it, /api/live.mp4 with a view token.
    func testVLCPlaysTheStream() throws {
        guard FileManager.default.fileExists(atPath: "/usr/bin/cvlc") else { throw XCTSkip("vlc-bin is not installed (make test-deps)") }
        let (d, _) = try LiveRTSPTests.startDaemon()
        defer { d.stop() }
        let token = try LiveRTSPTests.addToken(d, "vlc")
        let url = try WebScripts.url(d).replacingOccurrences(of: "http://", with: "http://viewer:\(token)@") + "/api/live.mp4"
        let scenes = d.dir + "/vlc"
        try FileManager.default.createDirectory(atPath: scenes, withIntermediateDirectories: true)
        chmod(d.dir, 0o755)
        chmod(scenes, 0o777)
        // VLC will not run as root: as nobody when this is root (CI).
        let vlc = ["/usr/bin/cvlc", "--intf", "dummy", "--vout", "dummy", "--aout", "dummy",
                   "--video-filter", "scene", "--scene-path", scenes, "--scene-format", "png", "--scene-ratio", "15",
                   "--run-time", "5", "--play-and-exit", url]
        let args = getuid() == 0 ? ["env", "HOME=/tmp", "runuser", "-u", "nobody", "--"] + vlc : vlc
        let (code, _, err) = try runTool("timeout", ["40"] + args)
        let shots = (try? FileManager.default.contentsOfDirectory(atPath: scenes)) ?? []
        print("live-vlc: exit \(code), \(shots.count) frames written by the scene filter")
        XCTAssertGreaterThanOrEqual(shots.count, 3, "VLC decoded frames for 5 s (exit \(code)): \(err.suffix(2000))")
        XCTAssertGreaterThan(try LiveRTSPTests.live(d)["pageFramesSent"] as? Int ?? 0, 60)
    }
}
