// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// `video.prerollSeconds` on the real shutterd and the simulated board: a kill -9
/// during a pre-roll clip loses nothing past the durable mark. (What a pre-roll
/// clip holds, in this process on the manual clock: PrerollTests.)
final class EndToEndPrerollTests: XCTestCase {
    private func config(audio: Bool = true) -> String {
        #"{"video": {"width": 640, "height": 360, "fps": 30, "prerollSeconds": 3}, "audio": {"enabled": \#(audio)}}"#
    }

    private func waitForRing(_ d: DaemonHarness, seconds: Double = 3.2) throws {
        try d.waitFor("a full pre-roll ring", timeout: 60) {
            ((try d.status()["preroll"] as? [String: Any])?["heldSeconds"] as? Double ?? 0) >= seconds
        }
    }

    /// How far the clip is on the card, by the log's last "durable: … to N s" line.
    private static func lastDurable(_ log: String) -> Double? {
        let line = log.split(separator: "\n").last { $0.contains("durable: ") && $0.contains(" to ") }
        return line.flatMap { line -> Double? in
            guard let r = line.range(of: " to ") else { return nil }
            return Double(line[r.upperBound...].prefix { $0 != " " })
        }
    }

    func testSIGKILLDuringAPrerollClipKeepsAllButTheOpenFragment() throws {
        let d = try DaemonHarness(config: config())
        try d.start()
        try waitForRing(d)
        XCTAssertEqual(try d.ctl("press").0, 0)
        try d.waitFor("recording", timeout: 60) { try d.status()["state"] as? String == "recording" }
        // Killed once the daemon says fragments recorded after the press are on the card:
        // the ring's 3 s are written (and synced) at once, so a durable mark past 4.5 s
        // holds the pre-roll and more than a second after it. (The bound only limits a hang.)
        try d.waitFor("a durable mark past 4.5 s", timeout: 120) { (Self.lastDurable(d.log()) ?? 0) > 4.5 }
        d.signal(SIGKILL)
        d.waitExit()
        let clip = try XCTUnwrap(d.files("MP4").first, d.log())
        let (ok, err) = try decodesCleanly(clip)
        XCTAssertTrue(ok, "a killed recording still decodes: \(err)")
        // The log's last durable line (written before the kill, so at least the mark waited
        // for) says how much was on the card; only what came after it may be lost.
        let kept = try probe(clip).format
        let said = try XCTUnwrap(Self.lastDurable(d.log()), d.log())
        XCTAssertGreaterThan(said, 4.5, "the mark waited for")
        XCTAssertGreaterThanOrEqual(kept + 0.05, said, "at least what the last durable line promised")
        print(String(format: "pre-roll clip killed: last durable mark %.3f s, the file holds %.3f s", said, kept))
    }

}
