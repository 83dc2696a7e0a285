// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// The real shutterd on the simulated board against a real Mosquitto (MQTTBroker), seen
/// only through the broker, as Home Assistant or a script would see it.
final class MQTTEndToEndTests: XCTestCase {
    private func daemon(_ broker: MQTTBroker, name: String, extra: String = "", top: String = "") throws -> DaemonHarness {
        let d = try DaemonHarness(config: broker.config(name: name, extra: extra, top: top))
        try d.start()
        return d
    }

    static let entityForm = #", "discoveryForm": "entity""#

    /// The configs by component on a board without a thermal zone or firmware flags (this
    /// machine): 16 entities and 4 device triggers.
    static let components = ["button": 3, "switch": 2, "binary_sensor": 1, "sensor": 4, "image": 1, "event": 2,
                             "select": 2, "number": 1, "device_automation": 4]

    /// The last message of each topic under a discovery prefix that ends in /config.
    private static func configs(_ seen: [MQTTSeen], camera: String) -> [String: [String: Any]] {
        var out: [String: [String: Any]] = [:]
        for m in seen where m.topic.hasSuffix("/config") && m.topic.contains("/\(camera)/") {
            out[m.topic] = m.json
        }
        return out
    }

    func testDiscoveryDescribesOneDeviceWithStableUniqueIDs() throws {
        let broker = try MQTTBroker()
        let sub = try broker.subscribe("homeassistant/#")
        // The per-entity form (Home Assistant before 2024.11); the device form: MQTTDiscoveryFormTests.
        let d = try daemon(broker, name: "cam0", extra: Self.entityForm)
        let configs = try sub.wait("twenty discovery configs") { seen -> [String: [String: Any]]? in
            let c = Self.configs(seen, camera: "cam0")
            return c.count >= 20 ? c : nil
        }
        // What Home Assistant's documentation requires of each platform (home-assistant.io/integrations/<p>.mqtt).
        let required: [String: [String]] = [
            "button": ["command_topic", "name", "unique_id", "availability_topic"],
            "switch": ["command_topic", "state_topic", "payload_on", "payload_off", "value_template", "state_on", "state_off"],
            "binary_sensor": ["state_topic", "value_template", "payload_on", "payload_off"],
            "sensor": ["state_topic", "value_template"],
            "image": ["image_topic", "content_type"],
            "select": ["command_topic", "state_topic", "value_template", "options", "command_template"],
            "number": ["command_topic", "command_template", "state_topic", "value_template", "min", "max", "step"],
            "event": ["state_topic", "event_types"],
            "device_automation": ["automation_type", "topic", "type", "subtype", "payload"],
        ]
        var devices: [NSDictionary] = []
        var uniqueIDs: [String] = []
        var components: [String: Int] = [:]
        for (topic, json) in configs.sorted(by: { $0.key < $1.key }) {
            let parts = topic.split(separator: "/")
            XCTAssertEqual(parts.count, 5, topic)
            let component = String(parts[1])
            components[component, default: 0] += 1
            for key in required[component] ?? ["?"] {
                XCTAssertNotNil(json[key], "\(topic) lacks \(key)")
            }
            guard let device = json["device"] as? [String: Any] else { XCTFail("\(topic) has no device"); continue }
            devices.append(device as NSDictionary)
            if let id = json["unique_id"] as? String { uniqueIDs.append(id) }
            if component == "device_automation" { XCTAssertEqual(json["automation_type"] as? String, "trigger") }
            if component == "event", topic.contains("/capture/") {
                XCTAssertEqual(json["event_types"] as? [String], ["photo", "clip", "deleted"])
            }
        }
        XCTAssertEqual(components, Self.components)
        XCTAssertEqual(Set(devices).count, 1, "one device block, the same in every config")
        let device = try XCTUnwrap(devices.first as? [String: Any])
        XCTAssertEqual(device["identifiers"] as? [String], ["shutter_cam0"])
        XCTAssertFalse((device["model"] as? String ?? "").isEmpty)
        XCTAssertNotNil(device["sw_version"] as? String)
        XCTAssertEqual(Set(uniqueIDs).count, 16, "sixteen entities, each its own unique id: \(uniqueIDs)")

        // Retained: a subscriber that comes later gets them all, flagged retained.
        d.stop()
        let late = try broker.subscribe("homeassistant/#")
        let kept = try late.wait("the retained configs") { seen -> [MQTTSeen]? in
            let r = seen.filter { $0.retained && $0.topic.contains("/cam0/") }
            return r.count >= 20 ? r : nil
        }
        XCTAssertEqual(Set(kept.map(\.topic)), Set(configs.keys))

        // Restarted: the same unique ids.
        let again = try broker.subscribe("homeassistant/#")
        try d.start()
        let after = try again.wait("the configs after a restart") { seen -> [String: [String: Any]]? in
            let c = Self.configs(seen.filter { !$0.retained }, camera: "cam0")
            return c.count >= 20 ? c : nil
        }
        XCTAssertEqual(Set(after.values.compactMap { $0["unique_id"] as? String }), Set(uniqueIDs))

        // `shutterctl mqtt forget`: every config emptied (retained), so Home Assistant drops the device.
        let (code, reply) = try d.ctl("mqtt", "forget")
        XCTAssertEqual(code, 0, "\(String(describing: reply))")
        try again.wait("every config emptied") { seen -> Bool? in
            let emptied = Set(seen.filter { $0.topic.hasSuffix("/config") && $0.payload.isEmpty }.map(\.topic))
            return emptied == Set(configs.keys) ? true : nil
        }
        print("MQTT discovery: \(configs.count) configs (\(uniqueIDs.count) entities, 4 device triggers), one device block, "
              + "unique ids stable across a restart; `mqtt forget` empties all \(configs.count)")
    }

    func testButtonCommandTopicTakesAPhotoTheEventNames() throws {
        let broker = try MQTTBroker()
        let sub = try broker.subscribe("homeassistant/button/#", "shutter/cam0/#")
        let d = try daemon(broker, name: "cam0", extra: Self.entityForm)
        let button = try sub.wait("the button's config") { $0.last { $0.topic == "homeassistant/button/cam0/take_photo/config" }?.json }
        let commandTopic = try XCTUnwrap(button["command_topic"] as? String)
        let payload = button["payload_press"] as? String ?? "PRESS"
        let start = Date()
        try broker.publish(commandTopic, payload)
        let event = try sub.wait("the photo's event") { $0.first { $0.topic == "shutter/cam0/event" } }
        let json = try XCTUnwrap(event.json)
        XCTAssertEqual(json["event_type"] as? String, "photo")
        XCTAssertEqual(json["camera"] as? String, "cam0")
        let name = try XCTUnwrap(json["name"] as? String)
        let file = try XCTUnwrap(d.files("JPG").first { $0.hasSuffix("/" + name) }, "the event names a file on the card")
        let size = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int
        XCTAssertEqual(json["size"] as? Int, size)
        XCTAssertEqual(json["number"] as? Int, 1_000_000 + Int(name.dropFirst(4).prefix(4))!)
        let thumb = try sub.wait("the thumbnail") { $0.last { $0.topic == "shutter/cam0/thumbnail" } }
        XCTAssertEqual(Array(thumb.payload.prefix(2)), [0xFF, 0xD8], "a JPEG")

        // MQTT 5 request/response: the socket's reply, on the response topic.
        try broker.publish(commandTopic, "photo", properties: ["-D", "PUBLISH", "response-topic", "shutter/cam0/reply/1",
                                                               "-D", "PUBLISH", "correlation-data", "req-1"])
        let reply = try sub.wait("the reply") { $0.first { $0.topic == "shutter/cam0/reply/1" }?.json }
        XCTAssertEqual(reply["ok"] as? Bool, true)
        let files = try XCTUnwrap(reply["files"] as? [String])
        XCTAssertEqual(files.count, 1)
        let second = try sub.wait("the second event") { $0.filter { $0.topic == "shutter/cam0/event" }.dropFirst().first?.json }
        XCTAssertEqual(files.first.map { String($0.split(separator: "/").last!) }, second["name"] as? String)
        print(String(format: "MQTT: command → photo event in %.0f ms; event names %@ (%d bytes), thumbnail %d bytes",
                     event.at.timeIntervalSince(start) * 1000, name, size ?? -1, thumb.payload.count))
    }

    /// A killed daemon cannot say goodbye: "offline" can only be the Last Will the broker
    /// publishes for it. When the broker does that is the broker's business (at once on the
    /// closed socket, or after 1.5 keep-alives), so the time is printed, not judged.
    func testKill9PublishesTheLastWill() throws {
        let broker = try MQTTBroker()
        let sub = try broker.subscribe("shutter/cam0/availability")
        let d = try daemon(broker, name: "cam0")
        try sub.wait("online") { $0.last?.text == "online" ? true : nil }
        let start = Date()
        d.signal(SIGKILL)
        XCTAssertNotNil(d.waitExit(timeout: 60), "shutterd did not die of SIGKILL")
        // The bound only limits a hang (a broker that never sends the will).
        let offline = try sub.wait("offline (the Last Will)", timeout: 180) { $0.last { $0.text == "offline" } }
        print(String(format: "MQTT: kill -9 → offline (the Last Will) in %.2f s", offline.at.timeIntervalSince(start)))
        d.process = nil
    }

    func testStoppedBrokerDelaysNoCaptureAndEventsArriveInOrder() throws {
        let broker = try MQTTBroker()
        let sub = try broker.subscribe("shutter/cam0/event", "shutter/cam0/button", "shutter/cam0/availability")
        // The longest hold threshold: two shutterctl runs on a busy machine are a tap, never a hold.
        let d = try daemon(broker, name: "cam0", top: #" "button": {"holdMs": 10000},"#)
        try sub.wait("online") { $0.last { $0.topic.hasSuffix("availability") }?.text == "online" ? true : nil }
        let brokerPID = try XCTUnwrap(broker.process?.processIdentifier)
        broker.signal(SIGSTOP)
        let stoppedAt = Date()
        // A capture that waited on the broker would be answered only once the broker runs
        // again. It is let go after 60 s (a bound on the wait, not a verdict), and that is
        // recorded: every reply must come while the broker is still stopped.
        let letGo = LetGo()
        let bound = DispatchWorkItem { letGo.set(); kill(brokerPID, SIGCONT) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: bound)
        var names: [String] = []
        var slowest = 0.0
        for i in 0..<6 {
            let t = Date()
            // Socket taps and button presses (a client's press: the recognizer's gesture) in turn.
            let reply: [String: Any]?
            if i % 2 == 0 {
                reply = try d.ctl("tap").1
            } else {
                XCTAssertEqual(try d.ctl("press").0, 0)
                // A finger's tap lasts ~100 ms: two shutterctl runs can come within
                // button.stabilityMs (20 ms) of each other, which the service rightly takes
                // for a bounce, not a press.
                usleep(100_000)
                reply = try d.ctl("release").1
            }
            slowest = max(slowest, Date().timeIntervalSince(t))
            let files = try XCTUnwrap(reply?["files"] as? [String], "capture \(i): \(String(describing: reply))")
            if files.count != 1 { print("capture \(i) made \(files.count) files: \(String(describing: reply))") }
            names += files.map { String($0.split(separator: "/").last!) }
        }
        bound.cancel()
        XCTAssertEqual(names.count, 6, "each capture's reply names its file (a reply with none is printed above)")
        XCTAssertFalse(letGo.happened, "a capture never waits on the broker: all six were answered while it was stopped")
        // The broker stays stopped for 10 s in all (the scenario, not a wait for nothing).
        while Date().timeIntervalSince(stoppedAt) < 10 { usleep(100_000) }
        broker.signal(SIGCONT)
        let events = try sub.wait("six events after SIGCONT", timeout: 30) { seen -> [String]? in
            let e = seen.filter { $0.topic.hasSuffix("/event") }.compactMap { $0.json?["name"] as? String }
            return e.count >= 6 ? e : nil
        }
        XCTAssertEqual(events, names, "every event, in order")
        let taps = sub.on("shutter/cam0/button").map(\.text)
        XCTAssertEqual(taps, ["tap", "tap", "tap"], "the button's gestures")
        print(String(format: "MQTT: broker stopped 10 s: 6 captures, slowest reply %.0f ms; all 6 events in order after SIGCONT",
                     slowest * 1000))
    }

    func testBadInputIsAnsweredAndTakesNothing() throws {
        let broker = try MQTTBroker()
        let sub = try broker.subscribe("shutter/cam0/reply/#")
        let d = try daemon(broker, name: "cam0")
        let command = "shutter/cam0/command"
        let bomb = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let cases: [(String, Data, String)] = [
            ("1 MiB", Data(repeating: 0x78, count: 1 << 20), "too long"),
            ("invalid UTF-8", Data([0x70, 0xFF, 0xFE, 0x80]), "UTF-8"),
            ("JSON bomb", Data(("{\"cmd\":" + bomb + "}").utf8), "too long"),
            ("deep JSON", Data(("{\"cmd\":\"photo\",\"x\":" + String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000) + "}").utf8), "malformed"),
            ("unknown command", Data("dance".utf8), "unknown command"),
            ("not over MQTT", Data("{\"cmd\":\"delete\",\"file\":\"last\"}".utf8), "not taken over MQTT"),
            ("malformed JSON", Data("{\"cmd\":".utf8), "malformed"),
        ]
        for (i, c) in cases.enumerated() {
            let topic = "shutter/cam0/reply/\(i)"
            XCTAssertEqual(try broker.publish(command, c.1, properties: ["-D", "PUBLISH", "response-topic", topic]), 0, c.0)
            let reply = try sub.wait("the reply to \(c.0)") { $0.first { $0.topic == topic }?.json }
            XCTAssertEqual(reply["ok"] as? Bool, false, c.0)
            XCTAssertTrue((reply["error"] as? String ?? "").contains(c.2), "\(c.0): \(reply)")
        }
        // A retained command: ignored live, and again at the next start.
        try broker.publish(command, "photo", retain: true)
        try d.waitFor("the retained command's warning", timeout: 10) { d.log().contains("ignored a retained command") }
        d.stop()
        try d.start()
        // (start() begins a new log.)
        try d.waitFor("the warning at the restart", timeout: 10) { d.log().contains("ignored a retained command") }
        XCTAssertEqual(try d.counters()["photos"], 0, "no input above took a photo")
        XCTAssertEqual(d.files("JPG"), [])
        try broker.publish(command, Data(), retain: true)  // cleared
        print("MQTT: \(cases.count) bad inputs answered with errors (1 MiB, invalid UTF-8, JSON bomb, deep JSON, unknown, "
              + "refused, malformed); a retained command ignored live and at restart; no photo")
    }

    func testTenCamerasOnOneBrokerNeverCross() throws {
        let broker = try MQTTBroker()
        let sub = try broker.subscribe("shutter/+/event", "shutter/+/availability")
        var cams: [DaemonHarness] = []
        for i in 0..<10 {
            let d = try DaemonHarness(config: broker.config(name: "cam\(i)"))
            try d.start(waitReady: false)
            cams.append(d)
        }
        for d in cams { try d.waitFor("ready", timeout: 60) { (try? d.status())?["state"] as? String == "idle" } }
        try sub.wait("ten cameras online", timeout: 30) { seen -> Bool? in
            Set(seen.filter { $0.topic.hasSuffix("/availability") && $0.text == "online" }.map(\.topic)).count == 10 ? true : nil
        }
        for i in 0..<10 { try broker.publish("shutter/cam\(i)/command", "photo") }
        let events = try sub.wait("ten events", timeout: 60) { seen -> [MQTTSeen]? in
            let e = seen.filter { $0.topic.hasSuffix("/event") }
            return e.count >= 10 ? e : nil
        }
        for e in events {
            let cam = e.topic.split(separator: "/")[1]
            XCTAssertEqual(e.json?["camera"] as? String, String(cam), "each event names its camera")
        }
        XCTAssertEqual(Set(events.map(\.topic)).count, 10, "one event per camera")
        for (i, d) in cams.enumerated() {
            XCTAssertEqual(d.files("JPG").count, 1, "cam\(i) took exactly its own photo")
        }
        // Retained: ten availabilities and ten states, one per camera, each its own.
        let late = try broker.subscribe("shutter/+/availability", "shutter/+/state")
        let retained = try late.wait("the retained messages") { seen -> [MQTTSeen]? in
            let r = seen.filter(\.retained)
            return r.count >= 20 ? r : nil
        }
        XCTAssertEqual(Set(retained.map(\.topic)).count, 20)
        XCTAssertTrue(retained.filter { $0.topic.hasSuffix("/availability") }.allSatisfy { $0.text == "online" })
        cams.forEach { $0.stop() }
        print("MQTT: ten shutterd on one broker: 10 commands, 10 photos, each on its own camera; 20 retained topics, none shared")
    }
}

/// Set once by the bound that lets a stopped broker go (on a Dispatch queue).
private final class LetGo: @unchecked Sendable {
    // Unchecked: the lock guards `flag`.
    private let lock = NSLock()
    private var flag = false
    func set() { lock.lock(); flag = true; lock.unlock() }
    var happened: Bool { lock.lock(); defer { lock.unlock() }; return flag }
}
