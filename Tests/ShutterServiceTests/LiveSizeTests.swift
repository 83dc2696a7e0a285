// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import XCTest

/// `live.size`: the live viewers' second, smaller stream on the real shutterd (simulated
/// board, small sizes to keep it quick), against ffprobe; a clip recorded meanwhile keeps
/// the video size. And what the key accepts.
final class LiveSizeTests: XCTestCase {
    func testViewersGetLiveSizeWhileAClipKeepsTheVideoSize() throws {
        let d = try DaemonHarness(config: """
            {"video": {"width": 640, "height": 360, "fps": 30, "prerollSeconds": 2},
             "live": {"size": "320x180", "rtsp": {"enabled": true, "listen": "127.0.0.1:0", "open": true}}}
            """)
        try d.start()
        defer { d.stop() }
        let url = try LiveRTSPTests.rtspBase(d) + "/live"
        XCTAssertEqual(try LiveRTSPTests.live(d)["ownEncoder"] as? Bool, false, "no one watches: no second encoder")

        // A viewer reads the stream while a clip is recorded.
        let viewer = Process(), out = d.dir + "/viewer.mp4"
        viewer.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        viewer.arguments = ["30", "ffmpeg", "-v", "error", "-rtsp_transport", "tcp", "-i", url, "-t", "4", "-c", "copy", "-y", out]
        viewer.standardInput = FileHandle.nullDevice
        viewer.standardOutput = FileHandle.nullDevice
        try viewer.run()
        try d.waitFor("a viewer", timeout: 20) { try LiveRTSPTests.live(d)["rtspViewers"] as? Int == 1 }
        XCTAssertEqual(try LiveRTSPTests.live(d)["ownEncoder"] as? Bool, true, "live.size: an encoder of its own while watched")
        let (code, reply) = try d.ctl("hold", "1.5")
        XCTAssertEqual(code, 0, d.log())
        viewer.waitUntilExit()
        XCTAssertEqual(viewer.terminationStatus, 0, d.log())

        let clip = try XCTUnwrap(d.files("MP4").first, "the clip; reply \(String(describing: reply)); log:\n\(d.log())")
        XCTAssertEqual(try Self.size(clip), "640x360", "the clip keeps the video size")
        XCTAssertEqual(try Self.size(out), "320x180", "the viewer gets live.size")
        XCTAssertEqual(try LiveRTSPTests.probeStream(url)?["video"]?.width, 320, "ffprobe on the RTSP stream")
        let frames = try LiveRTSPTests.videoPackets(out).count
        XCTAssertGreaterThan(frames, 60, "4 s of the small stream")
        print("live-size: viewer \(try Self.size(out)) (\(frames) frames in 4 s), clip \(try Self.size(clip))")

        // The last viewer gone, the second encoder stops (LiveVideo.idleStop, 2 s).
        try d.waitFor("the second encoder to stop", timeout: 20) { try LiveRTSPTests.live(d)["ownEncoder"] as? Bool == false }
    }

    /// "WIDTHxHEIGHT" of a file's video stream.
    static func size(_ path: String) throws -> String {
        let (_, dims, _) = try runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries",
                                                  "stream=width,height", "-of", "csv=p=0:s=x", path])
        return dims.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testTheKeyTakesAnEvenSizeOrNothing() throws {
        let key = try XCTUnwrap(ConfigSchema.byPath["live.size"])
        XCTAssertEqual(try ConfigSchema.check(.string(""), for: key), .string(""))
        XCTAssertEqual(try ConfigSchema.check(.string("1280X720"), for: key), .string("1280x720"))
        for bad in ["1281x720", "1280", "huge", "100x100", "8192x4320"] {
            XCTAssertThrowsError(try ConfigSchema.check(.string(bad), for: key), bad)
        }
        XCTAssertThrowsError(try ConfigSchema.check(.int(720), for: key))
    }
}
