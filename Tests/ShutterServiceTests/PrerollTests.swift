// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
import ShutterSim
@testable import ShutterService

/// `video.prerollSeconds` on the service and the simulated board, in this process
/// on the manual clock (InProcessRig), through control requests as shutterctl sends
/// them (docs/control-and-api.md "Pre-roll"). Which frame a clip starts with
/// comes from its pixels: the label the simulated camera burns into every frame.
/// (A kill -9 during a pre-roll clip: EndToEndPrerollTests, on the real shutterd.)
final class PrerollTests: XCTestCase {
    private func config(audio: Bool = true) -> String {
        #"{"video": {"width": 640, "height": 360, "fps": 30, "prerollSeconds": 3}, "audio": {"enabled": \#(audio)}}"#
    }

    private func waitForRing(_ d: InProcessRig, seconds: Double = 3.2) async throws {
        try await d.advance(until: "a full pre-roll ring", limit: .seconds(20)) {
            (await d.status().preroll?.heldSeconds ?? 0) >= seconds
        }
    }

    private func ms(_ d: InProcessRig) -> Double { Double(d.clock.now().nanoseconds) / 1e6 }

    func testHoldTwoWithThreeSecondsOfPrerollIsFiveSecondsFromThreeBeforeThePress() async throws {
        let d = try await InProcessRig.start(self, json: config())
        try await waitForRing(d)
        let before = ms(d)
        let r = try await d.ask(ControlRequest(cmd: "hold", seconds: 2))
        XCTAssertTrue(r.ok, "\(r)")
        let after = ms(d) - 2000  // the press came before the 2 s hold
        let path = try XCTUnwrap(r.files?.first, "\(r)")
        let offset = try XCTUnwrap(r.clipStartOffsetMs)
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

    func testATapWithPrerollGivesAPhotoAndLeavesTheRingRunning() async throws {
        let d = try await InProcessRig.start(self, json: config())
        try await waitForRing(d)
        let reply = try await d.ask(ControlRequest(cmd: "tap"))
        XCTAssertTrue(reply.ok, "\(reply)")
        let files = reply.files ?? []
        XCTAssertEqual(files.count, 1)
        XCTAssertTrue(files.first?.hasSuffix(".JPG") ?? false, "\(files)")
        XCTAssertEqual(d.files("MP4"), [], "a tap leaves no clip")
        try await d.advance(until: "the tap's clip file gone") { (try? d.litter()) == [] }
        XCTAssertEqual(try d.litter(), [])
        // The ring went on: a hold right after still reaches 3 s back.
        await d.advance(by: .milliseconds(500))
        let report = await d.status().preroll
        let ring = try XCTUnwrap(report)
        XCTAssertGreaterThanOrEqual(ring.heldSeconds, 3.0, "\(ring)")
        let hold = try await d.ask(ControlRequest(cmd: "hold", seconds: 1))
        XCTAssertTrue(hold.ok, "\(hold)")
        XCTAssertEqual(try XCTUnwrap(hold.clipStartOffsetMs), -3000, accuracy: 100)
    }

    func testTheRingStaysWithinTheBoundItReportsWhileIdle() async throws {
        let d = try await InProcessRig.start(self, json: config())
        try await waitForRing(d)
        var samples = 0
        let end = d.clock.now() + .seconds(20)
        while d.clock.now() < end {
            let report = await d.status().preroll
            let ring = try XCTUnwrap(report)
            XCTAssertGreaterThan(ring.bytes, 0)
            XCTAssertLessThanOrEqual(ring.bytes, ring.boundBytes, "\(ring)")
            XCTAssertGreaterThanOrEqual(ring.heldSeconds, 3.0, "the pre-roll is held: \(ring)")
            XCTAssertLessThanOrEqual(ring.heldSeconds, 3.0 + 1.0 + 0.2, "and no more than the slack beyond it: \(ring)")
            XCTAssertEqual(ring.capEvictions, 0, "the default bound is not reached: \(ring)")
            samples += 1
            await d.advance(by: .milliseconds(500))
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
