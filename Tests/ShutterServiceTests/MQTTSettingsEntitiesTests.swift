// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// The entities for what the service already does (issue 41, item 2), through a real
/// Mosquitto as Home Assistant uses them: each config's command (rendered as Home Assistant
/// renders it) acts on the camera (read back with shutterctl), and the status message shows
/// it; the diagnostics from a board's sysfs (a fake one, `SHUTTER_SYSFS_ROOT`: a thermal zone
/// at 51.2 °C and the firmware's flags 0x50005, under-voltage now and since boot, throttled
/// since boot); without those files, no such entities.
final class MQTTSettingsEntitiesTests: XCTestCase {
    private func sysfs(throttled: String) throws -> String {
        let root = try DaemonHarness.makeTempDir()
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/class/thermal/thermal_zone0", withIntermediateDirectories: true)
        try "51234\n".write(toFile: root + "/class/thermal/thermal_zone0/temp", atomically: true, encoding: .utf8)
        let firmware = root + "/devices/platform/soc/soc:firmware"
        try fm.createDirectory(atPath: firmware, withIntermediateDirectories: true)
        try "\(throttled)\n".write(toFile: firmware + "/get_throttled", atomically: true, encoding: .utf8)
        return root
    }

    private func config(_ seen: [MQTTSeen], _ component: String, _ object: String) -> [String: Any]? {
        seen.last { $0.topic == "homeassistant/\(component)/cam0/\(object)/config" && !$0.payload.isEmpty }?.json
    }

    func testEachEntityActsOnTheCameraAndTheDiagnosticsReadTheBoard() throws {
        let broker = try MQTTBroker()
        let sub = try broker.subscribe("homeassistant/#", "shutter/cam0/#")
        let d = try DaemonHarness(config: broker.config(name: "cam0", extra: MQTTEndToEndTests.entityForm))
        d.launcher = ["/usr/bin/env", "SHUTTER_SYSFS_ROOT=\(try sysfs(throttled: "50005"))"]
        try d.start()
        defer { d.stop() }

        // The torch: the switch's payloads, its state from the status.
        let torch = try sub.wait("the torch switch") { self.config($0, "switch", "torch") }
        XCTAssertEqual(torch["entity_category"] as? String, "config")
        try broker.publish(try XCTUnwrap(torch["command_topic"] as? String), try XCTUnwrap(torch["payload_on"] as? String))
        try d.waitFor("video.torch true", timeout: 20) { try d.ctl("get", "video.torch").1?["value"] as? Bool == true }
        _ = try sub.wait("the status with the torch on") { $0.last { $0.topic == "shutter/cam0/status" }?.json?["torch"] as? Bool == true ? true : nil }

        // Exposure compensation: the number's command template with Home Assistant's value.
        let ev = try sub.wait("the EV number") { self.config($0, "number", "exposure_ev") }
        XCTAssertEqual(ev["min"] as? Double, -8)
        XCTAssertEqual(ev["max"] as? Double, 8)
        let template = try XCTUnwrap(ev["command_template"] as? String)
        try broker.publish(try XCTUnwrap(ev["command_topic"] as? String), template.replacingOccurrences(of: "{{ value }}", with: "1.5"))
        try d.waitFor("camera.exposure.ev 1.5", timeout: 20) {
            try d.ctl("get", "camera.exposure.ev").1?["value"] as? Double == 1.5
        }
        _ = try sub.wait("the status with EV 1.5") { $0.last { $0.topic == "shutter/cam0/status" }?.json?["exposureEv"] as? Double == 1.5 ? true : nil }

        // Video size: the options down to 640x360; choosing it restarts the camera at that size.
        let size = try sub.wait("the video size select") { self.config($0, "select", "video_size") }
        let options = try XCTUnwrap(size["options"] as? [String])
        XCTAssertEqual(options.last, "640x360", "\(options)")
        let sizeTemplate = try XCTUnwrap(size["command_template"] as? String)
        try broker.publish(try XCTUnwrap(size["command_topic"] as? String), sizeTemplate.replacingOccurrences(of: "{{ value }}", with: "640x360"))
        try d.waitFor("video.sizes [640x360]", timeout: 20) { try d.ctl("get", "video.sizes").1?["value"] as? [String] == ["640x360"] }
        _ = try sub.wait("the status with 640x360", timeout: 40) {
            $0.last { $0.topic == "shutter/cam0/status" }?.json?["videoSize"] as? String == "640x360" ? true : nil
        }

        // Focus: the window at the centre (and the AF cycle the sim's lens runs).
        let focus = try sub.wait("the focus button") { self.config($0, "button", "focus") }
        XCTAssertNil(try d.ctl("get", "camera.focus.window").1?["value"] as? [Double])
        try broker.publish(try XCTUnwrap(focus["command_topic"] as? String), try XCTUnwrap(focus["payload_press"] as? String))
        try d.waitFor("a focus window", timeout: 20) { try d.ctl("get", "camera.focus.window").1?["value"] as? [Double] != nil }

        // Diagnostics: the board's figures in the status, and their entities.
        for (component, object) in [("sensor", "cpu_temperature"), ("binary_sensor", "throttled"), ("sensor", "uptime"),
                                    ("sensor", "last_error")] {
            let c = try sub.wait("\(component) \(object)") { self.config($0, component, object) }
            XCTAssertEqual(c["entity_category"] as? String, "diagnostic", object)
        }
        let status = try sub.wait("a status with the board's figures") { seen -> [String: Any]? in
            guard let s = seen.last(where: { $0.topic == "shutter/cam0/status" })?.json, s["cpuTemperature"] != nil else { return nil }
            return s
        }
        XCTAssertEqual(status["cpuTemperature"] as? Double, 51.2)
        let flags = try XCTUnwrap(status["throttled"] as? [String: Any])
        XCTAssertEqual(flags["problem"] as? Bool, true)
        XCTAssertEqual(flags["underVoltage"] as? Bool, true)
        XCTAssertEqual(flags["throttled"] as? Bool, true)
        XCTAssertEqual(flags["frequencyCapped"] as? Bool, false)
        XCTAssertEqual(flags["underVoltageSinceBoot"] as? Bool, true)
        XCTAssertEqual(flags["throttledSinceBoot"] as? Bool, true)
        XCTAssertEqual(flags["frequencyCappedSinceBoot"] as? Bool, false)
        XCTAssertEqual(flags["flags"] as? String, "0x50005")
        print("MQTT settings entities: torch, EV 1.5 and focus acted on the camera; CPU 51.2 °C, throttled flags 0x50005 "
              + "(a problem) in the status")
    }

    /// Only the flags since boot: no problem now.
    func testFlagsSinceBootAloneAreNoProblem() throws {
        let broker = try MQTTBroker()
        let sub = try broker.subscribe("shutter/cam0/status")
        let d = try DaemonHarness(config: broker.config(name: "cam0", extra: MQTTEndToEndTests.entityForm))
        d.launcher = ["/usr/bin/env", "SHUTTER_SYSFS_ROOT=\(try sysfs(throttled: "0x50000"))"]
        try d.start()
        defer { d.stop() }
        let flags = try sub.wait("the flags") { $0.last?.json?["throttled"] as? [String: Any] }
        XCTAssertEqual(flags["problem"] as? Bool, false)
        XCTAssertEqual(flags["underVoltageSinceBoot"] as? Bool, true)
        XCTAssertEqual(flags["underVoltage"] as? Bool, false)
    }
}
