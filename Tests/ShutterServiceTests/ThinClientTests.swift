// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// `shutterctl` is a socket client: it links the control protocol, ShutterCore and
/// libsodium (web-password's Argon2id), none of the service's device, codec or HTTP
/// libraries (issue 19), so it starts fast and installs without them.
final class ThinClientTests: XCTestCase {
    func testShutterctlLinksNoCameraCodecGPIOAudioHTTPOrJPEGLibrary() throws {
        let exe = DaemonHarness.binDir + "/shutterctl"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
        p.arguments = [exe]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, text)
        let libraries = text.split(separator: "\n").compactMap { $0.split(whereSeparator: \.isWhitespace).first.map(String.init) }
        XCTAssertTrue(libraries.contains { $0.hasPrefix("libsodium.so") }, "web-password's Argon2id: \(libraries)")
        let forbidden = ["libcamera", "libavcodec", "libavformat", "libavutil", "libswscale", "libswresample",
                         "libgpiod", "libasound", "libmicrohttpd", "libjpeg", "libturbojpeg", "libexif"]
        for name in forbidden {
            XCTAssertFalse(libraries.contains { $0.hasPrefix(name + ".") || $0.hasPrefix(name + "-") },
                           "shutterctl links \(name): \(libraries)")
        }
    }
}
