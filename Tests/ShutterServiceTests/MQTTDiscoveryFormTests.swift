// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// `mqtt.discoveryForm`: the device form (one retained config for the camera, Home Assistant
/// 2024.11+), and the hand-over between the two forms in the order Home Assistant's
/// documentation gives (marker on the old topics, the new configs, the old topics cleared),
/// against a real Mosquitto, seen only through the broker.
final class MQTTDiscoveryFormTests: XCTestCase {
    static let device = "homeassistant/device/cam0/config"

    private func daemon(_ broker: MQTTBroker, form: String) throws -> DaemonHarness {
        let d = try DaemonHarness(config: broker.config(name: "cam0", extra: #", "discoveryForm": "\#(form)""#))
        try d.start()
        return d
    }

    private static func isEntityTopic(_ t: String) -> Bool {
        t.hasSuffix("/config") && t.contains("/cam0/") && t != device
    }

    func testDeviceFormIsOneConfigWithEveryEntity() throws {
        let broker = try MQTTBroker()
        let sub = try broker.subscribe("homeassistant/#")
        let d = try daemon(broker, form: "device")
        defer { d.stop() }
        let config = try sub.wait("the device config") { $0.last { $0.topic == Self.device && !$0.payload.isEmpty }?.json }
        let device = try XCTUnwrap(config["device"] as? [String: Any])
        XCTAssertEqual(device["identifiers"] as? [String], ["shutter_cam0"])
        XCTAssertEqual((config["origin"] as? [String: Any])?["name"] as? String, "Shutter", "origin is required in the device form")
        let components = try XCTUnwrap(config["components"] as? [String: [String: Any]])
        var platforms: [String: Int] = [:]
        for (object, c) in components {
            let platform = try XCTUnwrap(c["platform"] as? String, object)
            platforms[platform, default: 0] += 1
            XCTAssertNil(c["device"], "\(object): the device once, at the top")
            XCTAssertNil(c["origin"], object)
            if platform == "device_automation" {
                XCTAssertNil(c["availability_topic"], "\(object): a trigger's schema has no availability")
            } else {
                // Home Assistant requires a unique_id of every entity in the device form; the same
                // ids as the entity form's, so entities keep their ids (and history) across forms.
                XCTAssertEqual(c["unique_id"] as? String, "shutter_cam0_\(object)")
                XCTAssertEqual(c["availability_topic"] as? String, "shutter/cam0/availability", object)
            }
        }
        XCTAssertEqual(platforms, MQTTEndToEndTests.components)
        // Nothing in the entity form, and no hand-over: nothing was there.
        let checked = try broker.subscribe("homeassistant/#")
        _ = try checked.wait("the retained device config") { $0.first { $0.retained && $0.topic == Self.device } }
        XCTAssertEqual(sub.messages.filter { Self.isEntityTopic($0.topic) }.map(\.topic), [])

        // Home Assistant's birth message: the device config again.
        let later = try broker.subscribe(Self.device)
        _ = try later.wait("the retained one") { $0.first { $0.retained } }
        try broker.publish("homeassistant/status", "online")
        _ = try later.wait("the device config sent again") { $0.first { !$0.retained && !$0.payload.isEmpty } }

        // `shutterctl mqtt forget` clears it.
        let (code, _) = try d.ctl("mqtt", "forget")
        XCTAssertEqual(code, 0)
        _ = try later.wait("the device config cleared") { $0.first { $0.payload.isEmpty } }
        print("MQTT device form: one config, \(components.count) components (\(platforms.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))); "
              + "sent again on Home Assistant's online; forget clears it")
    }

    /// `mqtt.discovery` false clears what either form left: a camera that published per-entity
    /// configs, started with discovery off (in the default device form), clears those too.
    func testDiscoveryOffClearsBothForms() throws {
        let broker = try MQTTBroker()
        let first = try daemon(broker, form: "entity")
        let initial = try broker.subscribe("homeassistant/+/cam0/+/config")
        let old = try initial.wait("the per-entity configs") { seen -> Set<String>? in
            let t = Set(seen.filter { !$0.payload.isEmpty && Self.isEntityTopic($0.topic) }.map(\.topic))
            return t.count >= 20 ? t : nil
        }
        first.stop()
        let sub = try broker.subscribe("homeassistant/#")
        let off = try DaemonHarness(config: broker.config(name: "cam0", extra: #", "discovery": false"#))
        try off.start()
        defer { off.stop() }
        try sub.wait("every per-entity config cleared, and the device topic") { seen -> Bool? in
            let cleared = Set(seen.filter { !$0.retained && $0.payload.isEmpty }.map(\.topic))
            return cleared.isSuperset(of: old) && cleared.contains(Self.device) ? true : nil
        }
        XCTAssertEqual(sub.messages.filter { !$0.retained && !$0.payload.isEmpty && $0.topic.contains("cam0") }.map(\.topic), [],
                       "nothing but clears")
    }

    /// A camera that published per-entity configs, started in the device form: for each old
    /// config, the marker first, then the device config, then the old topic cleared; a restart
    /// after that hands nothing over. Then back (the entity form): the same the other way.
    func testSwitchingFormsHandsTheConfigsOver() throws {
        let broker = try MQTTBroker()
        let first = try daemon(broker, form: "entity")
        let initial = try broker.subscribe("homeassistant/+/cam0/+/config")
        let old = try initial.wait("the per-entity configs") { seen -> Set<String>? in
            let t = Set(seen.filter { !$0.payload.isEmpty && Self.isEntityTopic($0.topic) }.map(\.topic))
            return t.count >= 20 ? t : nil
        }
        first.stop()

        let sub = try broker.subscribe("homeassistant/#")
        let second = try daemon(broker, form: "device")
        let cleared = try sub.wait("the old topics cleared") { seen -> [MQTTSeen]? in
            let live = seen.filter { !$0.retained }
            return Set(live.filter { $0.payload.isEmpty && Self.isEntityTopic($0.topic) }.map(\.topic)) == old ? live : nil
        }
        // In order: every marker, then the device config, then every clear.
        let markers = cleared.enumerated().filter { $0.element.json?["migrate_discovery"] as? Bool == true }
        XCTAssertEqual(Set(markers.map(\.element.topic)), old, "a marker on each old topic, and only there")
        let deviceAt = try XCTUnwrap(cleared.firstIndex { $0.topic == Self.device && !$0.payload.isEmpty })
        let clears = cleared.enumerated().filter { $0.element.payload.isEmpty && old.contains($0.element.topic) }
        XCTAssertLessThan(try XCTUnwrap(markers.map(\.offset).max()), deviceAt, "the markers before the device config")
        XCTAssertGreaterThan(try XCTUnwrap(clears.map(\.offset).min()), deviceAt, "the old topics cleared after it")
        XCTAssertEqual(cleared.filter { $0.topic == Self.device }.count, 1)
        second.stop()

        // The broker keeps the device config only; a restart hands nothing over.
        let kept = try broker.subscribe("homeassistant/#")
        _ = try kept.wait("the retained device config") { $0.first { $0.retained && $0.topic == Self.device } }
        XCTAssertEqual(kept.messages.filter { $0.retained && Self.isEntityTopic($0.topic) }.map(\.topic), [])
        let third = try daemon(broker, form: "device")
        _ = try kept.wait("the device config at the restart") { $0.first { !$0.retained && $0.topic == Self.device } }
        third.stop()
        XCTAssertEqual(kept.messages.filter { !$0.retained && $0.topic != Self.device && $0.topic.contains("cam0") }.map(\.topic),
                       [], "no marker and no clear once handed over")

        // And back to the entity form: the marker on the device topic, the entity configs, the device topic cleared.
        let back = try broker.subscribe("homeassistant/#")
        _ = try back.wait("the retained device config") { $0.first { $0.retained && $0.topic == Self.device } }
        let fourth = try daemon(broker, form: "entity")
        defer { fourth.stop() }
        let live = try back.wait("the device topic cleared") { seen -> [MQTTSeen]? in
            let l = seen.filter { !$0.retained }
            return l.contains { $0.topic == Self.device && $0.payload.isEmpty } ? l : nil
        }
        let marker = try XCTUnwrap(live.firstIndex { $0.topic == Self.device && $0.json?["migrate_discovery"] as? Bool == true })
        let entityAts = live.indices.filter { Self.isEntityTopic(live[$0].topic) && !live[$0].payload.isEmpty }
        let clear = try XCTUnwrap(live.firstIndex { $0.topic == Self.device && $0.payload.isEmpty })
        XCTAssertEqual(Set(entityAts.map { live[$0].topic }), old)
        XCTAssertTrue(entityAts.allSatisfy { marker < $0 && $0 < clear }, "marker, entity configs, clear")
        print("MQTT discovery hand-over: entity → device (\(old.count) markers, the device config, \(clears.count) clears), "
              + "a restart hands nothing over, device → entity (marker, \(entityAts.count) configs, clear)")
    }
}
