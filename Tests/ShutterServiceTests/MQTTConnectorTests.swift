// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// MQTT in the connector (`shutterd --connector`, shutterd-connector.service), beside a
/// shutterd started with `--no-connector` (shutterd.service, which has no network): the
/// camera on the broker through shutterd's control socket, seen only through the broker.
final class MQTTConnectorTests: XCTestCase {
    private func connector(_ d: DaemonHarness, log: String) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: DaemonHarness.binDir + "/shutterd")
        p.arguments = ["--connector", "--board", "sim", "--storage", d.storage, "--control-socket", d.socket]
            + d.extraArgs.filter { $0 != "--no-connector" }
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let out = FileHandle(forWritingAtPath: log)!
        p.standardOutput = out
        p.standardError = out
        p.standardInput = FileHandle.nullDevice
        try p.run()
        return p
    }

    func testTheConnectorSpeaksForAShutterdWithoutMQTT() throws {
        let broker = try MQTTBroker()
        let sub = try broker.subscribe("shutter/cam0/#", "homeassistant/#")
        let d = try DaemonHarness(config: broker.config(name: "cam0"), extraArgs: ["--no-connector"])
        try d.start()
        defer { d.stop() }
        XCTAssertTrue(d.log().contains("MQTT runs in the connector"), d.log())
        XCTAssertFalse(d.log().contains("MQTT: connecting"), "shutterd itself does not connect: \(d.log())")

        let log = d.dir + "/connector.log"
        let c = try connector(d, log: log)
        defer { if c.isRunning { kill(c.processIdentifier, SIGKILL) } }
        let online = try sub.wait("online from the connector") { $0.last { $0.topic == "shutter/cam0/availability" }?.text }
        XCTAssertEqual(online, "online")
        _ = try sub.wait("the state from shutterd's events") { $0.last { $0.topic == "shutter/cam0/state" }?.json }

        // A command on the broker: a photo from shutterd, its event and thumbnail back.
        try broker.publish("shutter/cam0/command", "photo")
        let event = try XCTUnwrap(try sub.wait("the photo's event") { $0.first { $0.topic == "shutter/cam0/event" }?.json })
        XCTAssertEqual(event["event_type"] as? String, "photo")
        let name = try XCTUnwrap(event["name"] as? String)
        XCTAssertNotNil(d.files("JPG").first { $0.hasSuffix("/" + name) }, "the photo is on shutterd's card")
        let thumb = try sub.wait("the thumbnail, read from the card") { $0.last { $0.topic == "shutter/cam0/thumbnail" } }
        XCTAssertEqual(Array(thumb.payload.prefix(2)), [0xFF, 0xD8], "a JPEG")
        let status = try sub.wait("the status") { $0.last { $0.topic == "shutter/cam0/status" }?.json }
        XCTAssertNotNil(status["photos"] ?? status["counters"], "\(status)")

        // shutterctl mqtt forget, asked of shutterd, done by the connector.
        let (code, reply) = try d.ctl("mqtt", "forget")
        XCTAssertEqual(code, 0, "\(reply ?? [:])")
        _ = try sub.wait("an emptied discovery config") { seen in
            seen.first { $0.topic.hasPrefix("homeassistant/") && $0.topic.hasSuffix("/config") && $0.payload.isEmpty }
        }

        // What the second process costs (debug build; printed, not judged).
        let rss = ((try? String(contentsOfFile: "/proc/\(c.processIdentifier)/status", encoding: .utf8)) ?? "")
            .split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? "VmRSS: ?"
        print("MQTT connector: resident \(rss.dropFirst("VmRSS:".count).trimmingCharacters(in: .whitespaces))")

        // Stopped: it says goodbye itself (not the Last Will), and ends with 0.
        kill(c.processIdentifier, SIGTERM)
        c.waitUntilExit()
        XCTAssertEqual(c.terminationStatus, 0, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
        let offline = try sub.wait("offline") { $0.last { $0.topic == "shutter/cam0/availability" && $0.text == "offline" } }
        XCTAssertNotNil(offline)
        print("MQTT connector: online, a command's photo \(name) with its event and thumbnail, forget passed on, offline at SIGTERM")
    }

    /// No broker where mqtt.url says: the log line's words become shutterd's
    /// `status.lastError`, whether MQTT runs in shutterd or in the connector.
    func testNoBrokerIsShutterdsLastErrorInProcessAndFromTheConnector() throws {
        let port = try WebEndToEndTests.freePort()  // nothing listens there
        let config = #"{"mqtt": {"enabled": true, "url": "mqtt://127.0.0.1:\#(port)", "name": "cam0"}, "audio": {"enabled": false}}"#
        for connectorElsewhere in [false, true] {
            let d = try DaemonHarness(config: config, extraArgs: connectorElsewhere ? ["--no-connector"] : [])
            try d.start()
            defer { d.stop() }
            let c = connectorElsewhere ? try connector(d, log: d.dir + "/connector.log") : nil
            defer { if let c, c.isRunning { kill(c.processIdentifier, SIGTERM); c.waitUntilExit() } }
            var last = ""
            try d.waitFor("MQTT's trouble as the last error", timeout: 60) {
                last = try d.status()["lastError"] as? String ?? ""
                return last.contains("no connection to mqtt://127.0.0.1:\(port)")
            }
            XCTAssertTrue(last.hasPrefix(connectorElsewhere ? "MQTT (shutterd-connector): " : "MQTT: "), last)
            XCTAssertTrue(last.contains("retries"), "says what happens next: \(last)")
            print("MQTT \(connectorElsewhere ? "in the connector" : "in shutterd"): status.lastError \"\(last)\"")
        }
    }

    /// With MQTT, uploads and the webhook off there is nothing to connect: the connector ends
    /// at once, with 0.
    func testWithMQTTOffTheConnectorEnds() throws {
        let d = try DaemonHarness(config: #"{"mqtt": {"enabled": false}}"#, extraArgs: ["--no-connector"])
        let c = try connector(d, log: d.dir + "/connector.log")
        c.waitUntilExit()
        XCTAssertEqual(c.terminationStatus, 0)
        let text = try String(contentsOfFile: d.dir + "/connector.log", encoding: .utf8)
        XCTAssertTrue(text.contains("nothing to connect: mqtt.enabled, upload.enabled and webhook.enabled are false"), text)
    }
}
