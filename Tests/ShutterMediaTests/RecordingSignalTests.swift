// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import ShutterMedia
import Synchronization
import XCTest

/// The recording process (shutter-media-tool, recording at real-time pace) killed or
/// terminated from outside, the file checked by ffmpeg. The verdicts compare the file with
/// what the tool reported (its durable marks, its frame count), never with the clock, so a
/// slow machine or an emulator that drops frames gives the same verdict; the figures are printed.
final class RecordingSignalTests: XCTestCase {
    /// The tool's stdout, line by line, as it comes.
    private final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        private let ended = Mutex(false)

        init(_ handle: FileHandle) {
            let t = Thread { [self] in
                var pending = Data()
                while true {
                    let d = handle.availableData
                    if d.isEmpty { break }
                    pending += d
                    while let nl = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        let line = String(decoding: pending[pending.startIndex..<nl], as: UTF8.self)
                        lines.withLock { $0.append(line) }
                        pending = Data(pending[(nl + 1)...])
                    }
                }
                ended.withLock { $0 = true }
            }
            t.start()
        }

        var all: [String] { lines.withLock { $0 } }
        var isEnded: Bool { ended.withLock { $0 } }

        func waitForEnd() { while !isEnded { usleep(10_000) } }

        /// The newest durable mark's frame count (0 before the first).
        var durableFrames: Int {
            all.last { $0.hasPrefix("durable ") }.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
        }
    }

    private func startTool(_ out: String, seconds: Int) throws -> (Process, Lines) {
        let p = Process()
        p.executableURL = RecordingProbe.productsDirectory.appendingPathComponent("shutter-media-tool")
        p.arguments = ["record", "--out", out, "--seconds", String(seconds), "--size", "640x360", "--preset", "ultrafast"]
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = FileHandle.nullDevice
        try p.run()
        let lines = Lines(pipe.fileHandleForReading)
        // From "started" on the clip runs at real time.
        while lines.all.isEmpty && !lines.isEnded { usleep(5_000) }
        XCTAssertTrue(lines.all.first?.hasPrefix("started") ?? false, "\(lines.all)")
        return (p, lines)
    }

    func testSIGKILLAtSeveralMomentsLosesNothingTheToolReportedDurable() throws {
        let dir = RecordingProbe.tempDir("kill")
        // Kill moments spread over 2-4.5 s, fixed so a failure can be replayed.
        let moments: [UInt32] = [2_300_000, 3_650_000, 4_450_000]
        for run in 0..<3 {
            let path = "\(dir)/kill\(run).mp4"
            let (p, lines) = try startTool(path, seconds: 60)
            let t0 = Date()
            usleep(moments[run])
            let killedAfter = Date().timeIntervalSince(t0)
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            lines.waitForEnd()
            XCTAssertEqual(p.terminationReason, .uncaughtSignal)
            // Every mark was printed before the kill: those frames were synced by then.
            let durable = lines.durableFrames
            let rawErrors = try RecordingProbe.decodeErrors(path)
            let streams = try RecordingProbe.streams(path, countFrames: true)
            XCTAssertEqual(streams.map(\.codec), ["h264", "aac"], "run \(run)")
            let decoded = streams.first?.frames ?? 0
            XCTAssertGreaterThanOrEqual(decoded, durable, "run \(run): frames reported durable before the kill are in the file")
            // A kill lands between fragment writes (whole file, must decode cleanly) or, rarely,
            // inside one write (a cut last fragment, which recovery removes).
            let cut = try FragmentedMP4Recovery.truncateToLastWholeFragment(path: path)
            if cut == 0 { XCTAssertEqual(rawErrors, "", "run \(run), killed after \(killedAfter) s") }
            XCTAssertEqual(try RecordingProbe.decodeErrors(path), "", "run \(run) after recovery")
            let kept = try RecordingProbe.streams(path, countFrames: true).first?.frames ?? 0
            XCTAssertGreaterThanOrEqual(kept, durable, "run \(run) after recovery")
            print(String(format: "kill run %d: killed after %.2f s; %d frames reported durable, %d decode, %d after recovery (%.2f s lost of the killed time)",
                         run, killedAfter, durable, decoded, kept, max(0, killedAfter - Double(kept) / 30)))
        }
    }

    func testSIGTERMFinalisesACompleteFile() throws {
        let dir = RecordingProbe.tempDir("term")
        let path = "\(dir)/term.mp4"
        let (p, lines) = try startTool(path, seconds: 60)
        // Terminated once the tool says 2 s (60 frames) are durable; the bound only limits a hang.
        let bound = Date().addingTimeInterval(60)
        while lines.durableFrames < 60 && !lines.isEnded && Date() < bound { usleep(10_000) }
        let durableAtSignal = lines.durableFrames
        XCTAssertGreaterThanOrEqual(durableAtSignal, 60, "the tool reported 2 s durable: \(lines.all)")
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        lines.waitForEnd()
        XCTAssertEqual(p.terminationStatus, 0)
        let summary = try XCTUnwrap(lines.all.last(where: { $0.hasPrefix("{") }))
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(summary.utf8)) as? [String: Any])
        XCTAssertEqual(json["stop"] as? String, "SIGTERM")
        let frames = try XCTUnwrap(json["frames"] as? Int)
        let dropped = try XCTUnwrap(json["dropped"] as? Int)
        XCTAssertGreaterThan(frames, 0)
        // How many frames the encoder kept up with is the machine's speed (bench-recording
        // measures it); that every frame it took is in the finished file is the recorder's.
        print("SIGTERM at \(durableAtSignal) frames durable: \(frames) frames written, \(dropped) dropped (encoder behind)")
        XCTAssertGreaterThanOrEqual(frames, durableAtSignal, "every frame reported durable is in the summary")
        XCTAssertEqual(try RecordingProbe.decodeErrors(path), "")
        let streams = try RecordingProbe.streams(path, countFrames: true)
        XCTAssertEqual(streams.first?.frames, frames, "every frame taken is in the file")
        let complete = lines.all.last { $0.hasPrefix("durable ") }
        XCTAssertEqual(complete.flatMap { Int($0.split(separator: " ")[1]) }, frames,
                       "the last durable mark is the finished file")
        // Frames dropped inside the clip leave their time in it; ones dropped at its end do not.
        for (i, s) in streams.prefix(2).enumerated() {
            XCTAssertGreaterThanOrEqual(s.duration, Double(frames - 1) / 30, "stream \(i)")
            XCTAssertLessThanOrEqual(s.duration, Double(frames + dropped + 1) / 30, "stream \(i)")
        }
        // A finalised fragmented MP4 ends with its random-access index (mfra).
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertTrue(data.suffix(4096).range(of: Data("mfra".utf8)) != nil, "file ends with mfra")
    }
}
