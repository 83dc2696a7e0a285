// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterControl
import ShutterCore
@testable import ShutterService

/// The control protocol's JSON comes from PlainJSON (no FoundationEssentials in the static
/// shutterctl, issue 31): the same bytes JSONEncoder wrote, compact on the wire and pretty
/// for `shutterctl status`, and it reads back what JSONDecoder read. A real status from
/// the service in this process (InProcessRig).
final class ControlCodingTests: XCTestCase {
    func testTheProtocolsJSONIsWhatJSONEncoderWroteAndReadsBack() async throws {
        var config = ShutterConfig()
        config.storage.root = try DaemonHarness.makeTempDir()
        config.video.width = 320
        config.video.height = 240
        config.audio.enabled = false
        config.sim.modeSwitchMs = 0
        config.camera.exposure.ev = 1.5
        config.camera.whiteBalance.mode = .daylight
        let rig = try await InProcessRig.start(self, config: config, camera: { $0.lacking = ["HdrMode"] })
        let status = await rig.status()
        let photo = try await rig.ask(ControlRequest(cmd: "photo"))
        let files = try await rig.ask(ControlRequest(cmd: "files"))
        let get = try await rig.ask(ControlRequest(cmd: "get", key: "camera.exposure.ev"))
        let code = try await rig.stop()
        XCTAssertEqual(code, 0)

        let replies = [ControlReply(ok: true, status: status), photo, files, get,
                       ControlReply(ok: false, error: "a \"quoted\" path/with\tcontrol \u{1} and é")]
        let compact = JSONEncoder()
        compact.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let pretty = JSONEncoder()
        pretty.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        for reply in replies {
            let line = ControlCoding.line(reply)
            XCTAssertEqual(String(decoding: line, as: UTF8.self), String(decoding: try compact.encode(reply), as: UTF8.self) + "\n")
            XCTAssertEqual(Data(line), ControlCoding.encode(reply))
            XCTAssertEqual(String(decoding: try PlainJSON.encode(reply, pretty: true), as: UTF8.self),
                           String(decoding: try pretty.encode(reply), as: UTF8.self))
            // Read back as JSONDecoder reads it: the same value, encoded the same again.
            let mine = try PlainJSON.decode(ControlReply.self, from: line)
            let theirs = try JSONDecoder().decode(ControlReply.self, from: Data(line))
            XCTAssertEqual(try compact.encode(mine), try compact.encode(theirs))
            XCTAssertEqual(try compact.encode(mine), try compact.encode(reply))
        }
        for request in [ControlRequest(cmd: "hold", seconds: 4.5), ControlRequest(cmd: "set", key: "led.brightness", value: .double(0.25)),
                        ControlRequest(cmd: "record", action: "start")] {
            XCTAssertEqual(ControlCoding.line(request), Array(try compact.encode(request)) + [0x0A])
        }
        // A reply that is not JSON, or lacks "ok", is an error, not a crash.
        XCTAssertThrowsError(try PlainJSON.decode(ControlReply.self, from: Array("not json".utf8)))
        XCTAssertThrowsError(try PlainJSON.decode(ControlReply.self, from: Array("{}".utf8)))
    }
}
