// SPDX-License-Identifier: BSD-2-Clause
import ShutterControl
import ShutterCore
import XCTest
@testable import ShutterService

/// With uploads on, Home Assistant discovers the queue ("Uploads waiting", its report as
/// attributes) and a problem sensor ("Uploads failing"), both read from the `status`
/// message, which carries the uploader's report; with uploads off, neither.
final class UploadDiscoveryTests: XCTestCase {
    func testTheQueueAndItsProblemSensorAreDiscoveredWithUploadsOn() throws {
        var config = ShutterConfig()
        config.mqtt.enabled = true
        config.mqtt.name = "shed"
        let off = MQTTDiscovery.configs(try MQTTSettings(config: config, board: "sim", hostName: "pi"))
        XCTAssertFalse(off.contains { $0.object.hasPrefix("uploads_") }, "nothing about uploads while they are off")
        config.upload.enabled = true
        config.upload.remote = "nas:camera"
        let settings = try MQTTSettings(config: config, board: "sim", hostName: "pi")
        let configs = MQTTDiscovery.configs(settings)
        let waiting = try XCTUnwrap(configs.first { $0.object == "uploads_waiting" })
        XCTAssertEqual(waiting.component, "sensor")
        XCTAssertEqual(waiting.json["state_topic"], .string(settings.status))
        let failing = try XCTUnwrap(configs.first { $0.object == "uploads_failing" })
        XCTAssertEqual(failing.component, "binary_sensor")
        XCTAssertEqual(failing.json["device_class"], .string("problem"))

        var status = ServiceStatus(state: "idle", board: "sim", camera: .init(model: "none", asked: CameraControls(),
                                                                               lacking: [], videoSizesAsked: [],
                                                                               stillSizesAsked: []),
                                   leds: [:], flashMode: "off", counters: .init(), storageRoot: "/x", lastFiles: [],
                                   uptimeSeconds: 1)
        XCTAssertNil(MQTTMessages.status(status, settings: settings, queued: 0, dropped: 0)["upload"])
        var report = UploadReport(remote: "nas:camera")
        report.waitingFiles = 3
        report.failing = true
        report.lastError = "rclone cannot copy to the remote \"nas\" now"
        status.upload = report
        let message = MQTTMessages.status(status, settings: settings, queued: 0, dropped: 0)
        guard case .object(let up)? = message["upload"] else { return XCTFail("no upload in the status message") }
        XCTAssertEqual(up["waitingFiles"], .int(3))
        XCTAssertEqual(up["failing"], .bool(true))
        XCTAssertEqual(up["lastError"], .string(report.lastError!))
    }
}

/// Found by the real Home Assistant (issue 41): two entities were both "Recording"; the
/// device's model was the board's long description; the event's url named a page that did
/// not start (no password).
final class DiscoveryNamesTests: XCTestCase {
    func testNamesModelAndTheLinkToThePage() throws {
        var config = ShutterConfig()
        config.mqtt.enabled = true
        config.mqtt.name = "porch"
        config.web.enabled = true
        var s = try MQTTSettings(config: config, board: "Raspberry Pi 5 Model B Rev 1.0", hostName: "pi")
        XCTAssertNil(s.webURL, "no page without a password, so no link to it")
        let configs = MQTTDiscovery.configs(s)
        let names = configs.compactMap { c -> String? in if case .string(let n)? = c.json["name"] { return n } else { return nil } }
        XCTAssertEqual(names.count, Set(names).count, "every entity's name once: \(names)")
        guard case .object(let device)? = configs[0].json["device"] else { return XCTFail("no device") }
        XCTAssertEqual(device["model"], .string("Shutter camera"))
        XCTAssertEqual(device["hw_version"], .string("Raspberry Pi 5 Model B Rev 1.0"))
        config.web.passwordHash = "$argon2id$v=19$m=65536,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA"
        s = try MQTTSettings(config: config, board: "rpi5", hostName: "pi")
        XCTAssertEqual(s.webURL, "http://pi:8080")
    }
}
