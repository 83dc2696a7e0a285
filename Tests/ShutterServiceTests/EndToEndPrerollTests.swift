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
        try d.waitFor("a full pre-roll ring", timeout: 20) {
            ((try d.status()["preroll"] as? [String: Any])?["heldSeconds"] as? Double ?? 0) >= seconds
        }
    }

    func testSIGKILLDuringAPrerollClipKeepsAllButTheOpenFragment() throws {
        let d = try DaemonHarness(config: config())
        try d.start()
        try waitForRing(d)
        XCTAssertEqual(try d.ctl("press").0, 0)
        try d.waitFor("recording", timeout: 10) { try d.status()["state"] as? String == "recording" }
        usleep(2_500_000)
        d.signal(SIGKILL)
        d.waitExit()
        let clip = try XCTUnwrap(d.files("MP4").first, d.log())
        let (ok, err) = try decodesCleanly(clip)
        XCTAssertTrue(ok, "a killed recording still decodes: \(err)")
        // The ring's 3 s were written (and synced) at once; after the press the clip
        // runs about 2.5 s + the hold time, of which only the open fragment (≤ 1 s) is lost.
        let kept = try probe(clip).format
        XCTAssertGreaterThan(kept, 4.5, "the pre-roll and all but the open fragment: \(kept) s")
        // The log's last durable line says how much was on the card.
        let durable = d.log().split(separator: "\n").last { $0.contains("durable: ") && $0.contains(" to ") }
        let said = try XCTUnwrap(durable.flatMap { line -> Double? in
            guard let r = line.range(of: " to ") else { return nil }
            return Double(line[r.upperBound...].prefix { $0 != " " })
        }, d.log())
        XCTAssertGreaterThanOrEqual(kept + 0.05, said, "at least what the last durable line promised")
    }

}
