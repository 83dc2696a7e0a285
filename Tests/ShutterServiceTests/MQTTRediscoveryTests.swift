// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// Home Assistant's birth message ("online" on <prefix>/status, sent when it or its MQTT
/// integration starts) makes the camera send its discovery configs again: a Home Assistant
/// that lost them (a broker without persistence restarted, the configs deleted) finds the
/// camera again without a restart of the camera (issue 41, item 2).
final class MQTTRediscoveryTests: XCTestCase {
    func testHomeAssistantOnlineSendsTheConfigsAgain() throws {
        let broker = try MQTTBroker()
        let d = try DaemonHarness(config: broker.config(name: "attic", extra: MQTTEndToEndTests.entityForm))
        try d.start()
        defer { d.stop() }
        let topic = "homeassistant/button/attic/take_photo/config"
        let first = try broker.subscribe(topic)
        _ = try first.wait("the config at the start") { seen in seen.first { $0.text.contains("unique_id") } }
        // The config lost: cleared on the broker, as a broker that kept nothing would have it.
        XCTAssertEqual(try broker.publish(topic, Data(), retain: true), 0)
        let later = try broker.subscribe(topic)
        try broker.publish("homeassistant/status", "online")
        let again = try later.wait("the config sent again") { seen in seen.first { $0.text.contains("unique_id") } }
        XCTAssertTrue(again.text.contains("\"unique_id\":\"shutter_attic_take_photo\""), again.text)
    }
}
