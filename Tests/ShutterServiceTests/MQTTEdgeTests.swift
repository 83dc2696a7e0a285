// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
@testable import ShutterCore
@testable import ShutterService

/// What a client on the broker can do to the camera's own topics and its connection: a
/// response topic may not be one of the camera's (a reply on `<topic>/availability` reads
/// as "not online"), and a second client with the camera's client id is said once, not
/// twice a second.
final class MQTTEdgeTests: XCTestCase {
    func testWhereARepliesMayGo() throws {
        var config = ShutterConfig()
        config.mqtt.name = "cam0"
        let s = try MQTTSettings(config: config, board: "sim")
        for t in ["shutter/cam0/reply/1", "replies/cam0", "a/b"] { XCTAssertTrue(s.mayReply(to: t), t) }
        for t in ["shutter/cam0/availability", "shutter/cam0/state", "shutter/cam0/command", "shutter/cam0",
                  "shutter/cam0/reply", "homeassistant/sensor/cam0/x/config", "homeassistant", "a/+/b", "$SYS/x", ""] {
            XCTAssertFalse(s.mayReply(to: t), t)
        }
    }

    /// The other form's configs of this camera, and nothing else: not the camera's own
    /// topics when the discovery prefix is a prefix of them, not another camera's configs.
    func testTheOtherFormsTopics() throws {
        var config = ShutterConfig()
        config.mqtt.name = "cam0"
        config.mqtt.discoveryPrefix = "shutter"
        let device = try MQTTSettings(config: config, board: "sim")
        XCTAssertTrue(device.isOtherFormConfig("shutter/button/cam0/take_photo/config"))
        for t in ["shutter/cam0/command", "shutter/cam0/discovery-check", "shutter/status", "shutter/device/cam0/config",
                  "shutter/button/cam1/take_photo/config", "shutter/button/cam0/take_photo", "homeassistant/button/cam0/x/config"] {
            XCTAssertFalse(device.isOtherFormConfig(t), t)
        }
        config.mqtt.discoveryForm = .entity
        let entity = try MQTTSettings(config: config, board: "sim")
        XCTAssertTrue(entity.isOtherFormConfig("shutter/device/cam0/config"))
        for t in ["shutter/device/cam1/config", "shutter/button/cam0/take_photo/config", "shutter/cam0/command"] {
            XCTAssertFalse(entity.isOtherFormConfig(t), t)
        }
        XCTAssertEqual(MQTTSettings.videoSizeOptions(asked: [PixelSize(width: 1920, height: 1080)]),
                       ["1920x1080", "1280x720", "960x540", "640x360"])
        XCTAssertEqual(MQTTSettings.videoSizeOptions(asked: [PixelSize(width: 1296, height: 972), PixelSize(width: 640, height: 480)]),
                       ["1296x972", "1280x720", "960x540", "640x480", "640x360"])
    }

    func testTakeoverIsThreeShortConnectionsInARow() {
        var t = MQTTTakeover()
        t.opened(at: 0)
        XCTAssertFalse(t.closed(at: 60), "a long connection")
        for i in 1...2 {
            t.opened(at: Double(100 + i))
            XCTAssertFalse(t.closed(at: Double(100 + i) + 0.5), "short one \(i)")
        }
        t.opened(at: 110)
        XCTAssertTrue(t.closed(at: 110.2), "the third short one in a row: said")
        XCTAssertTrue(t.flapping)
        t.opened(at: 111)
        XCTAssertFalse(t.closed(at: 111.1), "said once")
        t.opened(at: 112)
        XCTAssertFalse(t.holds(openedAt: 111), "not the connection that is open")
        XCTAssertTrue(t.holds(openedAt: 112), "the open one held: over")
        XCTAssertFalse(t.flapping)
    }

    func testResponseTopicUnderTheCameraGetsNoReply() throws {
        let broker = try MQTTBroker()
        let sub = try broker.subscribe("shutter/cam0/#", "homeassistant/#", "elsewhere/#")
        let d = try DaemonHarness(config: broker.config(name: "cam0"))
        try d.start()
        defer { d.stop() }
        try sub.wait("online") { $0.last { $0.topic == "shutter/cam0/availability" }?.text == "online" ? true : nil }
        let refused = ["shutter/cam0/availability", "shutter/cam0/state", "homeassistant/sensor/cam0/x/config"]
        for topic in refused + ["shutter/cam0/reply/ok", "elsewhere/reply"] {
            try broker.publish("shutter/cam0/command", "status", properties: ["-D", "PUBLISH", "response-topic", topic])
        }
        // The allowed replies were sent after the refused ones were decided.
        _ = try sub.wait("the allowed replies") { seen in
            seen.contains { $0.topic == "shutter/cam0/reply/ok" } && seen.contains { $0.topic == "elsewhere/reply" } ? true : nil
        }
        let replies = sub.messages.filter { $0.json?["ok"] != nil }.map(\.topic)
        XCTAssertEqual(Set(replies), ["shutter/cam0/reply/ok", "elsewhere/reply"], "replies only where allowed")
        XCTAssertEqual(sub.on("shutter/cam0/availability").map(\.text), ["online"], "availability never read otherwise")
        XCTAssertTrue(d.log().contains("no reply sent to the response topic"), d.log())
    }

    func testClientIdTakeoverIsSaidOnce() throws {
        let broker = try MQTTBroker()
        let d = try DaemonHarness(config: broker.config(name: "cam0"))
        try d.start()
        defer { d.stop() }
        try d.waitFor("connected", timeout: 20) { d.log().contains("MQTT: connected to") }
        let other = try broker.subscribe("x/y", session: "shutter-cam0")
        try d.waitFor("the takeover said", timeout: 40) { d.log().contains("another client is probably connected") }
        let takeovers = { (try? String(contentsOfFile: broker.dir + "/broker.log", encoding: .utf8))?
            .components(separatedBy: "already connected, closing old connection").count ?? 1 }
        let atWarning = takeovers()
        // The broker's own log counts the flapping that goes on: five more after the warning.
        try d.waitFor("five more takeovers", timeout: 60) { takeovers() >= atWarning + 5 }
        other.stop()
        let lines = d.log().split(separator: "\n").filter { $0.contains("shutter.mqtt") }
        let after = lines.drop { !$0.contains("another client is probably connected") }.dropFirst()
        let flapping = after.filter { $0.contains("no connection to") || $0.contains("connected to") }
        print("MQTT takeover: \(takeovers() - 1) takeovers in the broker's log, \(lines.count) MQTT log lines in all, "
              + "\(flapping.count) after the warning")
        XCTAssertEqual(flapping.count, 0, "quiet while the id goes back and forth:\n\(lines.joined(separator: "\n"))")
        XCTAssertLessThanOrEqual(lines.count, 2 + 2 * (MQTTTakeover.inARow - 1) + 1,
                                 "connecting, connected, two lines per short connection before the third, the warning")
    }
}
