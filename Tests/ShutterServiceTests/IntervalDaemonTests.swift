// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// Interval capture in the real `shutterd` on the simulated board, through `shutterctl`
/// and the card only: photos at the interval, a tap meanwhile, pause and resume, a restart
/// that goes on with the count, the count respected. Every verdict is on what the service
/// reports (`shutterctl interval status`, its uptime, the files); the timeouts only catch a hang.
final class IntervalDaemonTests: XCTestCase {
    func interval(_ h: DaemonHarness) throws -> [String: Any] {
        let (code, obj) = try h.ctl("interval", "status")
        XCTAssertEqual(code, 0, "\(String(describing: obj))")
        guard let i = obj?["interval"] as? [String: Any] else { throw HarnessError("no interval in \(String(describing: obj))") }
        return i
    }

    func taken(_ h: DaemonHarness) -> Int { ((try? interval(h))?["taken"] as? Int) ?? -1 }

    /// Waits until the service's own uptime is `seconds` past now (no sleep judged by this machine's speed).
    func waitServiceTime(_ h: DaemonHarness, _ seconds: Double) throws {
        let from = try XCTUnwrap(h.status()["uptimeSeconds"] as? Double)
        try h.waitFor("\(seconds) s of the service's time", timeout: 60) {
            (try h.status()["uptimeSeconds"] as? Double ?? 0) >= from + seconds
        }
    }

    func testPhotosAtTheIntervalATapPauseResumeAndTheCountAcrossARestart() throws {
        let h = try DaemonHarness(config: #"{"interval": {"enabled": true, "everySeconds": 2, "count": 6}}"#)
        try h.start()
        try h.waitFor("2 interval photos", timeout: 60) { self.taken(h) >= 2 }
        let first = try interval(h)
        XCTAssertTrue(["wall", "monotonic"].contains(first["clock"] as? String ?? ""), "\(first)")
        XCTAssertEqual(first["everySeconds"] as? Int, 2)
        XCTAssertEqual(first["count"] as? Int, 6)
        let slot = try XCTUnwrap((first["lastSlotSeconds"] as? NSNumber)?.int64Value, "\(first)")
        XCTAssertEqual(slot % 2, 0, "slots on the grid: \(first)")
        if first["clock"] as? String == "wall" { XCTAssertNotNil(first["nextSlot"], "local time with the wall clock: \(first)") }

        // A tap meanwhile: a photo of its own.
        let (tapCode, tap) = try h.ctl("tap")
        XCTAssertEqual(tapCode, 0, "\(String(describing: tap))\n\(h.log().suffix(2000))")
        XCTAssertEqual((tap?["files"] as? [String])?.count, 1)

        // Paused: the service's clock moves on by 3 slots and nothing is taken.
        let (pauseCode, paused) = try h.ctl("interval", "pause")
        XCTAssertEqual(pauseCode, 0)
        XCTAssertEqual((paused?["interval"] as? [String: Any])?["paused"] as? Bool, true)
        let atPause = taken(h)
        try waitServiceTime(h, 6)
        XCTAssertEqual(taken(h), atPause, "paused: \(String(describing: try? interval(h)))")
        try h.ctl("interval", "resume")
        try h.waitFor("a photo after the resume", timeout: 60) { self.taken(h) > atPause }

        // A restart: the count goes on from the card, and stops at interval.count.
        h.stop()
        let kept = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: h.storage + "/.interval/state.json")))
            as? [String: Any]
        let takenBefore = try XCTUnwrap(kept?["taken"] as? Int, "\(String(describing: kept))")
        XCTAssertGreaterThan(takenBefore, atPause)
        try h.start()
        XCTAssertGreaterThanOrEqual(taken(h), takenBefore, "the count goes on after a restart")
        try h.waitFor("the count reached", timeout: 90) {
            (try self.interval(h)["waiting"] as? String)?.contains("count") == true
        }
        try waitServiceTime(h, 4)
        let end = try interval(h)
        XCTAssertEqual(end["taken"] as? Int, 6, "\(end)")
        XCTAssertEqual(end["failed"] as? Int, 0, "\(end)")
        XCTAssertNil(end["nextSlot"], "\(end)")
        // Every photo the interval took is on the card, once, beside the tap's.
        try h.waitFor("the photos on the card", timeout: 30) { h.files("JPG").count == 7 }
        XCTAssertEqual(h.files("JPG").count, 7, "6 interval photos and a tap")
    }

    func testTheCommandRefusesWhenIntervalCaptureIsOff() throws {
        let h = try DaemonHarness()
        try h.start()
        let (code, obj) = try h.ctl("interval", "status")
        XCTAssertEqual(code, 1)
        XCTAssertTrue((obj?["error"] as? String)?.contains("interval.enabled") == true, "\(String(describing: obj))")
        XCTAssertNil(try h.status()["interval"])
    }
}
