import Foundation
import ShutterCore
import ShutterMedia
import XCTest

/// The recording process (shutter-media-tool, recording at real-time pace) killed or
/// terminated from outside, the file checked by ffmpeg.
final class RecordingSignalTests: XCTestCase {
    private func startTool(_ out: String, seconds: Int) throws -> (Process, Pipe) {
        let p = Process()
        p.executableURL = RecordingProbe.productsDirectory.appendingPathComponent("shutter-media-tool")
        p.arguments = ["record", "--out", out, "--seconds", String(seconds), "--size", "640x360", "--preset", "ultrafast"]
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = FileHandle.nullDevice
        try p.run()
        // Wait for "started": from then on the clip runs at real time.
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let d = pipe.fileHandleForReading.availableData
            if d.isEmpty { break }
            line += d
        }
        XCTAssertTrue(String(decoding: line, as: UTF8.self).hasPrefix("started"))
        return (p, pipe)
    }

    func testSIGKILLAtSeveralMomentsLeavesAFileThatDecodesUpToTheLastSecondAndAHalf() throws {
        let dir = RecordingProbe.tempDir("kill")
        // Kill moments spread over 2-4.5 s, fixed so a failure can be replayed.
        let moments: [UInt32] = [2_300_000, 3_650_000, 4_450_000]
        for run in 0..<3 {
            let path = "\(dir)/kill\(run).mp4"
            let (p, _) = try startTool(path, seconds: 60)
            let t0 = Date()
            usleep(moments[run])
            let killedAfter = Date().timeIntervalSince(t0)
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            XCTAssertEqual(p.terminationReason, .uncaughtSignal)
            let rawErrors = try RecordingProbe.decodeErrors(path)
            let streams = try RecordingProbe.streams(path, countFrames: true)
            XCTAssertEqual(streams.map(\.codec), ["h264", "aac"], "run \(run)")
            let decoded = Double(streams.first?.frames ?? 0) / 30
            XCTAssertGreaterThanOrEqual(decoded, killedAfter - 1.5, "run \(run): killed after \(killedAfter) s")
            // A kill lands between fragment writes (whole file, must decode cleanly) or, rarely,
            // inside one write (a cut last fragment, which recovery removes).
            let cut = try FragmentedMP4Recovery.truncateToLastWholeFragment(path: path)
            if cut == 0 { XCTAssertEqual(rawErrors, "", "run \(run), killed after \(killedAfter) s") }
            XCTAssertEqual(try RecordingProbe.decodeErrors(path), "", "run \(run) after recovery")
            let kept = Double(try RecordingProbe.streams(path, countFrames: true).first?.frames ?? 0) / 30
            XCTAssertGreaterThanOrEqual(kept, killedAfter - 1.5, "run \(run) after recovery")
        }
    }

    func testSIGTERMFinalisesACompleteFile() throws {
        let dir = RecordingProbe.tempDir("term")
        let path = "\(dir)/term.mp4"
        let (p, pipe) = try startTool(path, seconds: 60)
        usleep(2_500_000)
        kill(p.processIdentifier, SIGTERM)
        let rest = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        let summary = try XCTUnwrap(rest.split(separator: "\n").last(where: { $0.hasPrefix("{") }))
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(summary.utf8)) as? [String: Any])
        XCTAssertEqual(json["stop"] as? String, "SIGTERM")
        let frames = try XCTUnwrap(json["frames"] as? Int)
        XCTAssertGreaterThan(frames, 60)
        XCTAssertEqual(json["dropped"] as? Int, 0)
        XCTAssertEqual(try RecordingProbe.decodeErrors(path), "")
        let streams = try RecordingProbe.streams(path, countFrames: true)
        XCTAssertEqual(streams.first?.frames, frames, "every frame taken is in the file")
        XCTAssertEqual(streams[0].duration, Double(frames) / 30, accuracy: 1.0 / 30)
        XCTAssertEqual(streams[1].duration, Double(frames) / 30, accuracy: 1.0 / 30)
        // A finalised fragmented MP4 ends with its random-access index (mfra).
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertTrue(data.suffix(4096).range(of: Data("mfra".utf8)) != nil, "file ends with mfra")
    }
}
