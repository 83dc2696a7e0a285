// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore

/// The live RTSP stream as the unit runs it (issue 41): shutterd without a network of its
/// own (`PrivateNetwork=yes`: here `unshare --net`, an empty namespace), the listening
/// socket bound outside and passed in, named "rtsp" (shutterd-rtsp.socket's
/// `FileDescriptorName=`), as systemd does (Tests/web/socket_activate.py).
final class LiveRTSPSocketTests: XCTestCase {
    private func startInEmptyNetwork(rtspEnabled: Bool) throws -> (DaemonHarness, Int) {
        guard getuid() == 0 else { throw XCTSkip("unshare --net needs root") }
        let port = try WebEndToEndTests.freePort()
        let d = try DaemonHarness(config: """
            {"video": {"width": 640, "height": 360, "prerollSeconds": 2},
             "live": {"rtsp": {"enabled": \(rtspEnabled), "open": true, "listen": "127.0.0.1:1"}}}
            """)
        d.launcher = ["/usr/bin/python3", WebEndToEndTests.scripts + "/socket_activate.py", "rtsp=127.0.0.1:\(port)",
                      "--private-network"]
        try d.start()
        return (d, port)
    }

    /// A client that asks for UDP first (ffprobe's default) is answered 461 and plays over
    /// TCP; one that asks for TCP plays at once. The log says where it listens.
    func testTheStreamPlaysFromASocketSystemdPassedToAServiceWithoutNetwork() throws {
        let (d, port) = try startInEmptyNetwork(rtspEnabled: true)
        defer { d.stop() }
        try d.waitFor("the RTSP part on the passed socket", timeout: 15) {
            d.log().contains("live video on the socket systemd passed (shutterd-rtsp.socket, port \(port))")
        }
        let url = "rtsp://127.0.0.1:\(port)/live"
        for transport in [["-rtsp_transport", "tcp"], []] {
            let (code, out, err) = try runTool("timeout", ["30", "ffprobe", "-v", "error"] + transport
                                                + ["-show_entries", "stream=codec_type,codec_name,width,height", "-of", "csv=p=0", url])
            print("live-rtsp-socket: ffprobe \(transport.isEmpty ? "(UDP first)" : "-rtsp_transport tcp"): rc \(code), "
                  + out.split(separator: "\n").joined(separator: " | "))
            XCTAssertEqual(code, 0, "\(err)\nshutterd log:\n\(d.log().suffix(2000))")
            XCTAssertTrue(out.contains("h264,video,640,360"), out)
        }
        // UDP alone is refused (461: RTP cannot leave a process without a network).
        let (udp, _, udpErr) = try runTool("timeout", ["30", "ffprobe", "-v", "error", "-rtsp_transport", "udp", url])
        print("live-rtsp-socket: ffprobe -rtsp_transport udp: rc \(udp), \(udpErr.split(separator: "\n").first ?? "")")
        XCTAssertNotEqual(udp, 0, "UDP transport refused")
    }

    /// The socket enabled but live.rtsp.enabled false: said, not silently left hanging.
    func testAPassedSocketWithTheStreamOffIsSaid() throws {
        let (d, _) = try startInEmptyNetwork(rtspEnabled: false)
        defer { d.stop() }
        try d.waitFor("the warning", timeout: 15) {
            d.log().contains("systemd passed an RTSP socket (shutterd-rtsp.socket) but live.rtsp.enabled is false")
        }
    }
}
