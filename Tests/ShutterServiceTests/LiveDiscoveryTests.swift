// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import XCTest
@testable import ShutterService

/// Home Assistant's discovery names the live stream's URL when RTSP is on, and only then.
final class LiveDiscoveryTests: XCTestCase {
    func testDiscoveryAdvertisesTheRTSPStream() throws {
        var config = ShutterConfig()
        config.mqtt.enabled = true
        config.mqtt.name = "door"
        XCTAssertNil(MQTTDiscovery.configs(try MQTTSettings(config: config, board: "sim", hostName: "pi"))
            .first { $0.object == "live_stream" }, "no stream advertised while RTSP is off")
        config.live.rtsp.enabled = true
        let configs = MQTTDiscovery.configs(try MQTTSettings(config: config, board: "sim", hostName: "pi.local"))
        let stream = try XCTUnwrap(configs.first { $0.object == "live_stream" })
        XCTAssertEqual(stream.component, "sensor")
        XCTAssertEqual(stream.json["value_template"], .string("rtsp://pi.local:8554/live"), "the wildcard address as the host's name")
        XCTAssertEqual(stream.json["unique_id"], .string("shutter_door_live_stream"))
    }
}
