// SPDX-License-Identifier: BSD-2-Clause
import XCTest
import ShutterCore
@testable import ShutterService

/// MQTT's `event` message and the webhook's POST for a file a trigger made name the trigger,
/// as the live event does.
final class TriggerMessagesTests: XCTestCase {
    func testTheMQTTEventOfATriggersFileNamesIt() throws {
        var config = ShutterConfig()
        config.mqtt.name = "shed"
        let settings = try MQTTSettings(config: config, board: "sim", hostName: "shed")
        let live = LiveEvent(type: "file", data: ["path": .string("/card/DCIM/100SHUTR/SHTR0007.MP4"), "kind": .string("video"),
                                                  "name": .string("SHTR0007.MP4"), "source": .string("trigger"),
                                                  "trigger": .string("pir")])
        let e = try XCTUnwrap(MQTTMessages.event(live, settings: settings))
        XCTAssertEqual(e.type, "clip")
        XCTAssertEqual(e.json["source"], .string("trigger"))
        XCTAssertEqual(e.json["trigger"], .string("pir"))
        XCTAssertEqual(e.json["number"], .int(1_000_007))
        // The button's own file: neither.
        let plain = LiveEvent(type: "file", data: ["path": .string("/card/DCIM/100SHUTR/SHTR0008.JPG"), "kind": .string("photo"),
                                                   "name": .string("SHTR0008.JPG")])
        let p = try XCTUnwrap(MQTTMessages.event(plain, settings: settings))
        XCTAssertNil(p.json["source"])
        XCTAssertNil(p.json["trigger"])
    }

    func testTheWebhookPayloadOfATriggersFileNamesIt() {
        var e = WebhookEvent(event: "clip", file: "DCIM/100SHUTR/SHTR0007.MP4", bytes: 10, time: 0, timeTrusted: false)
        XCTAssertNil(WebhookPart.payload(e, id: "x", camera: "shed")["trigger"])
        e.source = "trigger"
        e.trigger = "door"
        let o = WebhookPart.payload(e, id: "x", camera: "shed")
        XCTAssertEqual(o["source"], .string("trigger"))
        XCTAssertEqual(o["trigger"], .string("door"))
        // A record written before these fields reads as the button's.
        let old = try? PlainJSON.decode(WebhookEvent.self, from: #"{"event":"photo","file":"a","bytes":1,"time":0,"timeTrusted":false,"attempts":0}"#)
        XCTAssertNotNil(old)
        XCTAssertNil(old?.trigger)
    }
}
