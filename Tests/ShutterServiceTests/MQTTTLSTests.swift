// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// `mqtts://` with `mqtt.caFile` against a real Mosquitto whose only listener speaks TLS,
/// with a server certificate for 127.0.0.1 from a throwaway CA (MQTTBroker(tls:)).
final class MQTTTLSTests: XCTestCase {
    func testOverTLSOnlineAndAPhotoCommandGivesItsEvent() throws {
        let broker = try MQTTBroker(tls: true)
        // The listener is TLS only: a client without TLS gets nowhere.
        let plain = try runTool("mosquitto_pub", ["-h", "127.0.0.1", "-p", String(broker.port), "-u", broker.user,
                                                  "-P", broker.password, "-t", "probe", "-n"])
        XCTAssertNotEqual(plain.0, 0, "a plain MQTT client must not get through the TLS listener")

        let sub = try broker.subscribe("shutter/cam0/#")  // mosquitto_sub --cafile
        let d = try DaemonHarness(config: broker.config(name: "cam0"))
        try d.start()
        try sub.wait("online over TLS") { $0.last { $0.topic == "shutter/cam0/availability" }?.text == "online" ? true : nil }
        XCTAssertTrue(d.log().contains("MQTT: connected to mqtts://127.0.0.1:\(broker.port)"), d.log())

        try broker.publish("shutter/cam0/command", "photo")
        let event = try sub.wait("the photo's event") { $0.first { $0.topic == "shutter/cam0/event" }?.json }
        XCTAssertEqual(event["event_type"] as? String, "photo")
        XCTAssertEqual(event["camera"] as? String, "cam0")
        let name = try XCTUnwrap(event["name"] as? String)
        let files = d.files("JPG")
        XCTAssertEqual(files.count, 1)
        XCTAssertTrue(files.first?.hasSuffix("/" + name) == true, "the event names the photo on the card: \(files)")
        print("MQTT over TLS: online, a photo command → event \(name)")
    }

    /// A CA that did not sign the broker's certificate: no connection, the camera as
    /// without MQTT, and a log line that says what to change.
    func testWrongCAKeepsTheCameraWorkingAndSaysWhatToDo() throws {
        let broker = try MQTTBroker(tls: true)
        let other = try MQTTBroker.makeCA(in: try DaemonHarness.makeTempDir(), name: "other")
        let d = try DaemonHarness(config: broker.config(name: "cam0", extra: #", "caFile": "\#(other.cert)""#))
        try d.start()

        var line = ""
        try d.waitFor("the TLS failure logged", timeout: 20) {
            guard let l = d.log().split(separator: "\n").first(where: { $0.contains("MQTT: TLS with") }) else { return false }
            line = String(l)
            return true
        }
        XCTAssertTrue(line.contains("mqtts://127.0.0.1:\(broker.port)"), line)
        XCTAssertTrue(line.contains("certificate verify failed"), "OpenSSL's reason: \(line)")
        XCTAssertTrue(line.contains("mqtt.caFile (\(other.cert))"), "names the file it used: \(line)")
        XCTAssertTrue(line.contains("set mqtt.caFile to"), "says what to do: \(line)")

        // The camera works: photos by the control socket.
        for _ in 0..<2 {
            let (code, reply) = try d.ctl("tap")
            XCTAssertEqual(code, 0, d.log())
            XCTAssertEqual((reply?["files"] as? [String])?.count, 1, "\(String(describing: reply))")
        }
        XCTAssertEqual(d.files("JPG").count, 2)
        XCTAssertEqual(d.process?.isRunning, true)

        // It retried, and said so once (the broker saw a second handshake fail).
        try d.waitFor("a second attempt at the broker", timeout: 20) {
            let log = (try? String(contentsOfFile: broker.dir + "/broker.log", encoding: .utf8)) ?? ""
            return log.components(separatedBy: "New connection from 127.0.0.1").count - 1 >= 3  // probe + 2 of shutterd
        }
        XCTAssertEqual(d.log().components(separatedBy: "MQTT: TLS with").count - 1, 1, "logged once:\n\(d.log())")

        // Never online: the broker holds no availability for it (retained messages reach a
        // subscriber before its own probe does).
        let late = try broker.subscribe("shutter/cam0/#")
        XCTAssertEqual(late.on("shutter/cam0/availability").map(\.text), [])
        print("MQTT over TLS, wrong CA: 2 photos by the socket; log: \(line)")
    }
}
