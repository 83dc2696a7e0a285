// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
@testable import ShutterService

/// The broker away: the camera as without MQTT, the events kept in order and delivered
/// when it is back, the retained state published again; the outbox's bound.
final class MQTTReconnectTests: XCTestCase {
    func testBrokerAbsentAtStartCapturesWorkAndEventsFollowInOrder() throws {
        let broker = try MQTTBroker(persistent: true)
        // A subscriber whose session the broker keeps: it collects what comes while it is away.
        try broker.subscribe("shutter/cam0/event", session: "tester").stop()
        broker.stop()
        let d = try DaemonHarness(config: broker.config(name: "cam0"))
        try d.start()  // ready without a broker
        var names: [String] = []
        var slowest = 0.0
        for _ in 0..<3 {
            let t = Date()
            let reply = try d.ctl("tap").1
            slowest = max(slowest, Date().timeIntervalSince(t))
            names += try XCTUnwrap(reply?["files"] as? [String]).map { String($0.split(separator: "/").last!) }
        }
        // Each tap was answered with its file before the broker was started: one that waited
        // on it would have had no answer (shutterctl gives up after 120 s) and failed above.
        try d.waitFor("the broker's absence logged", timeout: 10) { d.log().contains("MQTT: no connection to") }
        try broker.start()
        try d.waitFor("connected again", timeout: 90) { d.log().contains("MQTT: connected to") }
        let log = d.log()
        XCTAssertEqual(log.components(separatedBy: "MQTT: no connection to").count - 1, 1, "logged once:\n\(log)")
        let back = try XCTUnwrap(log.split(separator: "\n").first { $0.contains("MQTT: connected to") })
        XCTAssertTrue(back.contains("failed attempt"), String(back))

        let sub = try broker.subscribe("shutter/cam0/event", session: "tester")
        let events = try sub.wait("the kept events") { seen -> [String]? in
            let e = seen.filter { $0.topic == "shutter/cam0/event" }.compactMap { $0.json?["name"] as? String }
            return e.count >= 3 ? e : nil
        }
        XCTAssertEqual(events, names, "every event, in order")
        let late = try broker.subscribe("shutter/cam0/availability", "shutter/cam0/state", "shutter/cam0/status")
        let retained = try late.wait("the retained state again") { seen -> [String: MQTTSeen]? in
            let r = Dictionary(seen.filter(\.retained).map { ($0.topic, $0) }) { _, b in b }
            return r.count >= 3 ? r : nil
        }
        XCTAssertEqual(retained["shutter/cam0/availability"]?.text, "online")
        XCTAssertEqual(retained["shutter/cam0/state"]?.json?["state"] as? String, "ready")
        print("MQTT: broker absent at start: 3 captures (slowest \(Int(slowest * 1000)) ms), absence logged once; \(back.split(separator: ":").dropFirst(1).joined(separator: ":").trimmingCharacters(in: .whitespaces)); 3 events in order, availability/state/status retained again")
    }

    func testAHoldBetweenStatusMessagesGivesItsClipEvent() throws {
        let broker = try MQTTBroker()
        let sub = try broker.subscribe("shutter/cam0/event", "shutter/cam0/status")
        let d = try DaemonHarness(config: broker.config(name: "cam0"))
        try d.start()
        try sub.wait("a status") { $0.contains { $0.topic.hasSuffix("/status") } ? true : nil }
        let reply = try d.ctl("hold", "1").1
        let file = try XCTUnwrap((reply?["files"] as? [String])?.first)
        let event = try sub.wait("the clip's event") { $0.first { $0.json?["event_type"] as? String == "clip" }?.json }
        XCTAssertEqual(event["name"] as? String, String(file.split(separator: "/").last!))
        XCTAssertGreaterThan(event["size"] as? Int ?? 0, 0)
        print("MQTT: a 1 s hold → clip event \(event["name"] ?? "?") (\(event["size"] ?? "?") bytes)")
    }

    func testOutboxKeepsOrderBoundsAndCountsDrops() {
        var o = MQTTOutbox(capacity: 4, inflightLimit: 2)
        let t0 = MonotonicTime(nanoseconds: 0)
        for i in 0..<6 { _ = o.enqueue(.init(topic: "e", payload: Data([UInt8(i)]))) }
        XCTAssertEqual(o.dropped, 2, "past the bound the oldest go, counted")
        XCTAssertEqual(o.queued.map { $0.payload[0] }, [2, 3, 4, 5])
        let a = o.next(now: t0)!, b = o.next(now: t0)!
        o.handed(a, mid: 1, now: t0)
        o.handed(b, mid: 2, now: t0)
        XCTAssertNil(o.next(now: t0), "at most inflightLimit in flight")
        o.acknowledged(1)
        let c = o.next(now: t0)!
        XCTAssertEqual([a, b, c].map { $0.payload[0] }, [2, 3, 4], "in order")
        o.handed(c, mid: nil, now: t0)
        XCTAssertEqual(o.queued.first, c, "refused by the client: first again")
    }
}
