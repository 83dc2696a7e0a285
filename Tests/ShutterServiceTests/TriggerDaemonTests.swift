// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// Trigger inputs in the real `shutterd` on the simulated board, through `shutterctl` only:
/// `sim --trigger` moves an input's line, `events` names the trigger on the file it made,
/// `status.triggers` counts it; a configuration with a line the button uses does not start.
/// Verdicts on what the service reports; the timeouts only catch a hang.
final class TriggerDaemonTests: XCTestCase {
    func trigger(_ h: DaemonHarness, _ name: String) throws -> [String: Any] {
        let all = try XCTUnwrap(h.status()["triggers"] as? [[String: Any]], "status.triggers")
        return try XCTUnwrap(all.first { $0["name"] as? String == name }, "\(all)")
    }

    func testSimTriggerMakesAPhotoWhoseEventNamesIt() throws {
        let h = try DaemonHarness(config: """
            {"triggers": {"inputs": [{"name": "pir", "line": "GPIO23", "holdOffSeconds": 30}]}}
            """)
        try h.start()
        // The events as shutterctl prints them, from before the trigger (the state comes first).
        let eventsPath = h.dir + "/events.txt"
        _ = FileManager.default.createFile(atPath: eventsPath, contents: nil)
        let events = Process()
        events.executableURL = URL(fileURLWithPath: DaemonHarness.binDir + "/shutterctl")
        events.arguments = ["--socket", h.socket, "events"]
        events.standardOutput = FileHandle(forWritingAtPath: eventsPath)
        try events.run()
        defer { if events.isRunning { events.terminate() } }
        func eventLines() -> [String] {
            ((try? String(contentsOfFile: eventsPath, encoding: .utf8)) ?? "").split(separator: "\n")
                .map { $0.replacingOccurrences(of: " ", with: "") }
        }
        try h.waitFor("the events stream's first line", timeout: 30) { !eventLines().isEmpty }
        var (code, obj) = try h.ctl("sim", "--trigger", "pir", "--active", "true")
        XCTAssertEqual(code, 0, "\(String(describing: obj))")
        try h.waitFor("the trigger active in status", timeout: 30) { (try self.trigger(h, "pir")["active"] as? Bool) == true }
        (code, obj) = try h.ctl("sim", "--trigger", "pir", "--active", "false")
        XCTAssertEqual(code, 0)
        try h.waitFor("the trigger's photo", timeout: 60) { (try self.trigger(h, "pir")["photos"] as? Int) == 1 }
        XCTAssertEqual(h.files("JPG").count, 1)
        let t = try trigger(h, "pir")
        XCTAssertEqual(t["fired"] as? Int, 1, "\(t)")
        XCTAssertEqual(t["action"] as? String, "photo")
        try h.waitFor("the file's event", timeout: 30) { eventLines().contains { $0.contains("SHTR0001.JPG") } }
        let lines = eventLines()
        XCTAssertTrue(lines.contains { $0.contains("\"trigger\"") && $0.contains("\"pir\"") && $0.contains("\"active\":true") },
                      "a trigger event: \(lines)")
        XCTAssertTrue(lines.contains { $0.contains("SHTR0001.JPG") && $0.contains("\"source\":\"trigger\"") && $0.contains("\"trigger\":\"pir\"") },
                      "the file event names the trigger: \(lines)")
        (code, obj) = try h.ctl("sim", "--trigger", "nope", "--active", "true")
        XCTAssertNotEqual(code, 0, "\(String(describing: obj))")
        h.stop()
    }

    func testALineTheButtonUsesStopsTheStartWithEXCONFIG() throws {
        let h = try DaemonHarness(config: #"{"triggers": {"inputs": [{"name": "pir", "line": 17}]}}"#)
        try h.start(waitReady: false)
        let code = h.waitExit(timeout: 30)
        XCTAssertEqual(code, 78, h.log())
        XCTAssertTrue(h.log().contains("triggers.inputs") && h.log().contains("gpio.button"), h.log())
    }
}
