// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterControl
import ShutterMedia
import XCTest

/// The real `shutterd`: every clip it finishes is a regular MP4 (issue 30), also one
/// recovered after a kill, and a kill in the middle of the finish loses nothing.
final class EndToEndRegularClipTests: XCTestCase {
    /// `shutterctl hold 4`: the clip's boxes hold no fragment, exiftool reads 4 s.
    func testAHoldGivesARegularMP4() throws {
        let d = try DaemonHarness()
        try d.start()
        defer { d.stop() }
        let (reply, _) = try ControlClient.send(ControlRequest(cmd: "hold", seconds: 4), to: d.socket)
        XCTAssertTrue(reply.ok, reply.error ?? "")
        let clip = try XCTUnwrap(reply.files?.first)
        try assertRegular(clip, seconds: 4, d)
        let tags = try exiftool(clip)
        XCTAssertEqual(tags["Make"] as? String, "Shutter", "\(tags)")
        XCTAssertEqual(tags["Model"] as? String, "Simulated camera")
        XCTAssertTrue((tags["Software"] as? String)?.hasPrefix("Shutter ") == true, "\(tags)")
    }

    /// kill -9 five seconds into `record start`, then a restart: the clip is kept (cut to
    /// its last whole fragment) and finished the same way.
    func testAClipKilledMidRecordingIsFinishedAtTheNextStart() throws {
        let d = try DaemonHarness()
        try d.start()
        let (started, _) = try ControlClient.send(ControlRequest(cmd: "record", action: "start"), to: d.socket)
        XCTAssertTrue(started.ok, started.error ?? "")
        try d.waitFor("5 s recorded", timeout: 60) {
            ((try d.status()["recording"] as? [String: Any])?["elapsedSeconds"] as? Double ?? 0) >= 5
        }
        d.signal(SIGKILL)
        _ = d.waitExit()
        let clip = try XCTUnwrap(d.files("MP4").first)
        XCTAssertTrue(try RegularMP4.isFragmented(clip), "fragmented at the kill")
        try d.start()
        defer { d.stop() }
        XCTAssertEqual(d.files("MP4"), [clip])
        // Finished by a job once the service runs (READY does not wait for it).
        try d.waitFor("the recovered clip finished", timeout: 60) { try !RegularMP4.isFragmented(clip) }
        try assertRegular(clip, seconds: nil, d)
        let kept = try probe(clip).format
        XCTAssertGreaterThan(kept, 3.0, "all but the open fragment: \(kept) s")
    }

    /// A kill inside the finish, before and after its rename: one playable clip and no
    /// temporary file after the restart, and nothing reported durable is lost. The finish
    /// is held at its step by `shutterd --debug-stall-finish`, which logs once it holds.
    func testAKillDuringTheFinishLeavesOnePlayableClip() throws {
        for step in ["before-rename", "after-rename"] {
            let d = try DaemonHarness()
            let plain = d.extraArgs
            d.extraArgs += ["--debug-stall-finish", step]
            try d.start()
            let (pressed, _) = try ControlClient.send(ControlRequest(cmd: "press"), to: d.socket)
            XCTAssertTrue(pressed.ok)
            // Released once shutterd says 2 s are recorded (past the 1 s hold; the bound only limits a hang).
            try d.waitFor("2 s recorded (\(step))", timeout: 60) {
                ((try d.status()["recording"] as? [String: Any])?["elapsedSeconds"] as? Double ?? 0) >= 2
            }
            // The reply waits for the finish, which the hook stops: do not wait for it.
            _ = try? ControlClient.send(ControlRequest(cmd: "release"), to: d.socket, timeout: .seconds(1))
            try d.waitFor("the clip saved and its finish stopped \(step)", timeout: 60) {
                let log = d.log()
                return log.contains("clip saved") && log.contains("durable: ") && log.contains(" complete, ")
                    && log.contains("finish stopped \(step) (--debug-stall-finish)")
            }
            let clip = try XCTUnwrap(d.files("MP4").first)
            XCTAssertEqual(FileManager.default.fileExists(atPath: RegularMP4.temporaryPath(for: clip)), step == "before-rename",
                           "\(step): the finished copy is beside the clip before the rename, not after it")
            XCTAssertEqual(try RegularMP4.isFragmented(clip), step == "before-rename",
                           "\(step): the clip is the fragmented file before the rename, the regular one after it")
            let durableFrames = try XCTUnwrap(Self.durableFrames(d.log()), "a durable mark in the log")
            // How long the clip is, as the service measured it (the press and release it saw).
            let savedMs = try XCTUnwrap(Self.savedMilliseconds(d.log()), "a clip saved line")
            d.signal(SIGKILL)
            _ = d.waitExit()
            XCTAssertEqual(try decodesCleanly(clip).0, true, "\(step): the clip plays at the kill")

            d.extraArgs = plain
            try d.start()
            XCTAssertEqual(d.files("MP4"), [clip], step)
            try d.waitFor("the clip finished again (\(step))", timeout: 60) {
                try !RegularMP4.isFragmented(clip)
                    && !FileManager.default.fileExists(atPath: RegularMP4.temporaryPath(for: clip))
            }
            try assertRegular(clip, seconds: Double(savedMs) / 1000, d)
            let frames = try countFrames(clip)
            print("\(step): \(frames) frames in the finished clip, \(durableFrames) reported durable")
            XCTAssertGreaterThanOrEqual(frames, durableFrames, "\(step): nothing reported durable is lost")
            d.stop()
        }
    }

    /// Segments (`video.segmentSeconds`) and a SIGTERM mid-recording end in the same finish.
    func testSegmentsAndSIGTERMGiveRegularMP4s() throws {
        let d = try DaemonHarness(config: #"{"video": {"segmentSeconds": 2}}"#)
        try d.start()
        let (reply, _) = try ControlClient.send(ControlRequest(cmd: "hold", seconds: 5), to: d.socket)
        XCTAssertTrue(reply.ok, reply.error ?? "")
        let segments = reply.files ?? []
        XCTAssertGreaterThanOrEqual(segments.count, 2, "a 5 s hold in 2 s segments: \(segments)")
        for f in segments { try assertRegular(f, seconds: nil, d) }

        let (started, _) = try ControlClient.send(ControlRequest(cmd: "record", action: "start"), to: d.socket)
        XCTAssertTrue(started.ok, started.error ?? "")
        try d.waitFor("1 s recorded", timeout: 60) {
            ((try d.status()["recording"] as? [String: Any])?["elapsedSeconds"] as? Double ?? 0) >= 1
        }
        d.signal(SIGTERM)
        XCTAssertEqual(d.waitExit(), 0)
        let after = d.files("MP4").filter { !segments.contains($0) }
        XCTAssertFalse(after.isEmpty, "the recording stopped by SIGTERM was kept")
        for f in after { try assertRegular(f, seconds: nil, d) }
        XCTAssertTrue(d.log().contains("as a regular MP4"), "finished before the service exited")
    }

    // MARK: Checks

    private func assertRegular(_ clip: String, seconds: Double?, _ d: DaemonHarness,
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let boxes = try RegularMP4.topLevelBoxes(clip)
        XCTAssertFalse(boxes.contains("moof") || boxes.contains("mfra"), "regular: \(boxes)", file: file, line: line)
        XCTAssertEqual(boxes.filter { $0 == "moov" }.count, 1, "\(boxes)", file: file, line: line)
        let dir = (clip as NSString).deletingLastPathComponent
        let hidden = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix(".") }
        XCTAssertEqual(hidden, [], "no temporary file left", file: file, line: line)
        XCTAssertEqual(try decodesCleanly(clip).0, true, file: file, line: line)
        if let seconds {
            let duration = try XCTUnwrap(try exiftool(clip)["Duration"] as? Double, file: file, line: line)
            print("\((clip as NSString).lastPathComponent): exiftool Duration \(duration) s (held \(seconds) s)")
            XCTAssertEqual(duration, seconds, accuracy: 0.1, "exiftool's duration", file: file, line: line)
        }
    }

    private func exiftool(_ path: String) throws -> [String: Any] {
        let (_, out, err) = try runTool("exiftool", ["-n", "-j", path])
        let list = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [[String: Any]]
        return try XCTUnwrap(list?.first, err)
    }

    private func countFrames(_ path: String) throws -> Int {
        let (_, out, _) = try runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-count_frames", "-show_entries",
                                                  "stream=nb_read_frames", "-of", "csv=p=0", path])
        return Int(out.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// "clip saved: PATH (77 frames, 2533 ms)": the milliseconds.
    static func savedMilliseconds(_ log: String) -> Int? {
        guard let line = log.split(separator: "\n").last(where: { $0.contains("clip saved: ") }),
              let r = line.range(of: #"(\d+) ms\)"#, options: .regularExpression) else { return nil }
        return Int(line[r].split(separator: " ").first ?? "")
    }

    /// The frames of the newest `durable:` line ("... (fragment 2, 60 frames)" or "(3 fragments, 75 frames)").
    static func durableFrames(_ log: String) -> Int? {
        let lines = log.split(separator: "\n").filter { $0.contains("durable: ") }
        guard let last = lines.last, let r = last.range(of: #"(\d+) frames\)"#, options: .regularExpression) else { return nil }
        return Int(last[r].split(separator: " ").first ?? "")
    }
}
