import Foundation
import XCTest
import ShutterSim

/// `video.prerollSeconds` on the real shutterd and the simulated board, through
/// shutterctl (README "The moment of the press", pre-roll). Which frame a clip starts
/// with comes from its pixels: the label the simulated camera burns into every frame.
final class EndToEndPrerollTests: XCTestCase {
    private func config(audio: Bool = true) -> String {
        #"{"video": {"width": 640, "height": 360, "fps": 30, "prerollSeconds": 3}, "audio": {"enabled": \#(audio)}}"#
    }

    private func waitForRing(_ d: DaemonHarness, seconds: Double = 3.2) throws {
        try d.waitFor("a full pre-roll ring", timeout: 20) {
            ((try d.status()["preroll"] as? [String: Any])?["heldSeconds"] as? Double ?? 0) >= seconds
        }
    }

    func testHoldTwoWithThreeSecondsOfPrerollIsFiveSecondsFromThreeBeforeThePress() throws {
        let d = try DaemonHarness(config: config())
        try d.start()
        defer { d.stop() }
        try waitForRing(d)
        let before = monotonicMs()
        let (code, reply) = try d.ctl("hold", "2")
        XCTAssertEqual(code, 0, d.log())
        let after = monotonicMs() - 2000  // the press came before the 2 s hold
        let r = try XCTUnwrap(reply, d.log())
        let path = try XCTUnwrap((r["files"] as? [String])?.first, "\(r)")
        let offset = try XCTUnwrap(r["clipStartOffsetMs"] as? Double)
        XCTAssertEqual(offset, -3000, accuracy: 100, "the clip starts 3 s ± 0.1 s before the press")

        let p = try probe(path)
        XCTAssertEqual(p.format, 5.0, accuracy: 0.2, "3 s of pre-roll and a 2 s hold")
        let (ok, err) = try decodesCleanly(path)
        XCTAssertTrue(ok, err)
        // The first frame's pixels: its burned-in exposure start is the reported start,
        // and 3 s ± 0.1 s before the press (which lies between the test's clock readings).
        let first = try XCTUnwrap(try firstFrameLabel(path), "the burned-in label reads back")
        let press = Double(first.millis) - offset
        XCTAssertGreaterThanOrEqual(press, before - 1.5, "first frame T\(first.millis), offset \(offset)")
        XCTAssertLessThanOrEqual(press, after + 1.5, "first frame T\(first.millis), offset \(offset)")
        XCTAssertEqual(Double(first.millis) + 3000, press, accuracy: 100, "3 s ± 0.1 s before the press")

        // Audio: both tracks start at the start keyframe and run to the end together.
        let (_, out, _) = try runTool("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,start_time,duration",
                                                  "-of", "csv=p=0", path])
        var tracks: [String: (start: Double, duration: Double)] = [:]
        for line in out.split(separator: "\n") {
            let f = line.split(separator: ",").map(String.init)
            if f.count == 3, let s = Double(f[1]), let du = Double(f[2]) { tracks[f[0]] = (s, du) }
        }
        let v = try XCTUnwrap(tracks["video"], out), a = try XCTUnwrap(tracks["audio"], out)
        XCTAssertLessThan(abs(a.start - v.start), 0.040, "audio aligned with the first frame: \(out)")
        XCTAssertLessThan(abs((a.start + a.duration) - (v.start + v.duration)), 0.060, "and ends with it: \(out)")
        print("pre-roll clip: first frame F\(first.frame) T\(first.millis), press [\(before), \(after)], offset \(offset) ms, "
              + "\(p.format) s; video \(v), audio \(a)")
    }

    func testATapWithPrerollGivesAPhotoAndLeavesTheRingRunning() throws {
        let d = try DaemonHarness(config: config())
        try d.start()
        defer { d.stop() }
        try waitForRing(d)
        let (code, reply) = try d.ctl("tap")
        XCTAssertEqual(code, 0, d.log())
        let files = reply?["files"] as? [String] ?? []
        XCTAssertEqual(files.count, 1)
        XCTAssertTrue(files.first?.hasSuffix(".JPG") ?? false, "\(files)")
        XCTAssertEqual(d.files("MP4"), [], "a tap leaves no clip")
        let litter = try FileManager.default.contentsOfDirectory(atPath: d.storage).filter { $0.hasPrefix(".shutter-pending") }
        XCTAssertEqual(litter, [])
        // The ring went on: a hold right after still reaches 3 s back.
        usleep(500_000)
        let ring = try XCTUnwrap(try d.status()["preroll"] as? [String: Any])
        XCTAssertGreaterThanOrEqual(ring["heldSeconds"] as? Double ?? 0, 3.0, "\(ring)")
        let (holdCode, hold) = try d.ctl("hold", "1")
        XCTAssertEqual(holdCode, 0, d.log())
        XCTAssertEqual(try XCTUnwrap(hold?["clipStartOffsetMs"] as? Double), -3000, accuracy: 100)
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

    func testTheRingStaysWithinTheBoundItReportsWhileIdle() throws {
        let d = try DaemonHarness(config: config())
        try d.start()
        defer { d.stop() }
        try waitForRing(d)
        var samples = 0
        let end = Date().addingTimeInterval(20)
        while Date() < end {
            let ring = try XCTUnwrap(try d.status()["preroll"] as? [String: Any])
            let bytes = try XCTUnwrap(ring["bytes"] as? Int), bound = try XCTUnwrap(ring["boundBytes"] as? Int)
            let held = try XCTUnwrap(ring["heldSeconds"] as? Double)
            XCTAssertGreaterThan(bytes, 0)
            XCTAssertLessThanOrEqual(bytes, bound, "\(ring)")
            XCTAssertGreaterThanOrEqual(held, 3.0, "the pre-roll is held: \(ring)")
            XCTAssertLessThanOrEqual(held, 3.0 + 1.0 + 0.2, "and no more than the slack beyond it: \(ring)")
            XCTAssertEqual(ring["capEvictions"] as? Int, 0, "the default bound is not reached: \(ring)")
            samples += 1
            usleep(500_000)
        }
        XCTAssertGreaterThan(samples, 20)
    }

    /// The first video frame of a clip, decoded to luma, its burned-in label read.
    private func firstFrameLabel(_ path: String) throws -> (frame: UInt64, millis: Int64)? {
        let raw = path + ".grey"
        defer { try? FileManager.default.removeItem(atPath: raw) }
        let (code, _, err) = try runTool("ffmpeg", ["-v", "error", "-y", "-i", path, "-frames:v", "1", "-f", "rawvideo",
                                                   "-pix_fmt", "gray", raw])
        guard code == 0 else { throw HarnessError("ffmpeg: \(err)") }
        let luma = Array(try Data(contentsOf: URL(fileURLWithPath: raw)))
        return BurnedInLabel.read(luma: luma, width: 640, height: 360)
    }
}

private func monotonicMs() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
}
