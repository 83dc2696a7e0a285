// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import ShutterMedia
import XCTest

/// A finished clip is a regular MP4 (issue 30): what phones, Windows and messengers read
/// for duration, seeking and date. Checked with exiftool, ffprobe and GStreamer, not with
/// the code under test.
final class RegularMP4Tests: XCTestCase {
    /// 2026-03-04T05:06:07.250Z at the press.
    static let pressWall = WallTime(secondsSinceEpoch: 1_772_600_767, nanoseconds: 250_000_000, isTrusted: true)

    func testAFinishedClipIsRegularWithItsDurationDateAndCamera() throws {
        let dir = RecordingProbe.tempDir("regular")
        var s = RecordingSettings(preset: "ultrafast")
        s.queueFrames = 400
        s.labels = ClipLabels(make: "Acme", model: "Cam 1", software: "Shutter 9.9", rotation: 180)
        var rec = SyntheticRecording(width: 320, height: 240, frames: 150)
        let press = SyntheticRecording.start
        rec.wallTime = { Self.pressWall.adding($0 - press) }
        let path = try XCTUnwrap(try rec.record(s, to: dir).paths.first)
        XCTAssertTrue(try RegularMP4.topLevelBoxes(path).contains("moof"), "recorded as fragments")
        let framesBefore = try RecordingProbe.streams(path, countFrames: true).first { $0.type == "video" }?.frames

        let figures = try XCTUnwrap(try RegularMP4.finish(path: path))
        let boxes = try RegularMP4.topLevelBoxes(path)
        print("finish: \(boxes), \(figures.bytesWritten) bytes written for \(figures.sourceBytes) fragmented, \(figures.duration.milliseconds) ms")
        XCTAssertEqual(boxes.filter { $0 == "moov" }.count, 1, "\(boxes)")
        XCTAssertFalse(boxes.contains("moof") || boxes.contains("mfra"), "no fragments left: \(boxes)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: RegularMP4.temporaryPath(for: path)), "no temporary file")
        XCTAssertEqual(figures.bytesWritten, Int64((try FileManager.default.attributesOfItem(atPath: path))[.size] as! Int))
        XCTAssertEqual(try RecordingProbe.decodeErrors(path), "")
        let streams = try RecordingProbe.streams(path, countFrames: true)
        XCTAssertEqual(streams.first { $0.type == "video" }?.frames, framesBefore, "every frame kept")
        XCTAssertEqual(streams.first { $0.type == "audio" }?.codec, "aac", "the sound kept")

        let tags = try exiftool(path)
        let duration = try XCTUnwrap(tags["Duration"] as? Double, "\(tags)")
        XCTAssertEqual(duration, 5.0, accuracy: 0.1, "150 frames at 30 fps")
        XCTAssertEqual(tags["CreateDate"] as? String, "2026:03:04 05:06:07", "the press, in UTC (the MP4 stores UTC; exiftool prints it as stored)")
        XCTAssertEqual(tags["TrackCreateDate"] as? String, "2026:03:04 05:06:07")
        XCTAssertEqual(tags["MediaCreateDate"] as? String, "2026:03:04 05:06:07")
        XCTAssertEqual(tags["Make"] as? String, "Acme")
        XCTAssertEqual(tags["Model"] as? String, "Cam 1")
        XCTAssertEqual(tags["Software"] as? String, "Shutter 9.9")
        XCTAssertEqual(tags["MajorBrand"] as? String, "isom")
        XCTAssertEqual(tags["Rotation"] as? Int, 180, "the display matrix")

        // Another player's demuxer agrees on the duration.
        let gst = try discovererDuration(path)
        let ffprobe = try ffprobeDuration(path)
        print("duration: exiftool \(duration) s, ffprobe \(ffprobe) s, gst-discoverer \(gst) s")
        XCTAssertEqual(gst, ffprobe, accuracy: 0.1)
        XCTAssertEqual(ffprobe, duration, accuracy: 0.1)

        XCTAssertNil(try RegularMP4.finish(path: path), "a regular file is left alone")
    }

    /// Frames a second apart (a camera under emulation, a long exposure): the finished file
    /// ends where the fragmented one did, its last frame lasting as long as before.
    func testTheFinishedClipEndsWhereTheFragmentedOneDid() throws {
        let dir = RecordingProbe.tempDir("regular-end")
        var s = RecordingSettings(preset: "ultrafast", audioChannels: 0)
        s.queueFrames = 100
        var rec = SyntheticRecording(width: 160, height: 120, frames: 5)
        rec.frameTime = { i in .milliseconds(Int64(i) * 917) }
        let path = try XCTUnwrap(try rec.record(s, to: dir).paths.first)
        let before = try RecordingProbe.videoEnd(path)
        try RegularMP4.finish(path: path)
        let after = try RecordingProbe.videoEnd(path)
        print("video end: fragmented \(before) s, finished \(after) s")
        XCTAssertEqual(after, before, accuracy: 0.002, "the last frame keeps its duration")

        // The same with sound, cut inside its last fragment (a power cut) and recovered.
        s.audioChannels = 1
        rec.frames = 8
        let cutPath = try XCTUnwrap(try rec.record(s, to: dir, name: "cut").paths.first)
        let data = try Data(contentsOf: URL(fileURLWithPath: cutPath))
        let mfra = try XCTUnwrap(data.range(of: Data("mfra".utf8), options: .backwards)).lowerBound - 4
        try data.prefix(mfra - 300).write(to: URL(fileURLWithPath: cutPath))
        try FragmentedMP4Recovery.truncateToLastWholeFragment(path: cutPath)
        let cutBefore = try RecordingProbe.videoEnd(cutPath)
        try RegularMP4.finish(path: cutPath)
        let cutAfter = try RecordingProbe.videoEnd(cutPath)
        print("video end after a cut: fragmented \(cutBefore) s, finished \(cutAfter) s")
        XCTAssertEqual(cutAfter, cutBefore, accuracy: 0.05, "the recovered clip keeps its last frame's duration")
    }

    /// No date beats a wrong one: an untrusted clock leaves the creation time out.
    func testAnUntrustedClockWritesNoDate() throws {
        let dir = RecordingProbe.tempDir("regular-undated")
        var s = RecordingSettings(preset: "ultrafast")
        s.queueFrames = 100
        var rec = SyntheticRecording(width: 160, height: 120, frames: 30)
        let untrusted = WallTime(secondsSinceEpoch: Self.pressWall.secondsSinceEpoch, isTrusted: false)
        rec.wallTime = { _ in untrusted }
        let path = try XCTUnwrap(try rec.record(s, to: dir).paths.first)
        try RegularMP4.finish(path: path)
        let date = try exiftool(path)["CreateDate"] as? String
        XCTAssertTrue(date == nil || date == "0000:00:00 00:00:00", "no creation time: \(date ?? "absent")")
    }

    /// A finish cut off by a kill leaves its hidden file: the next start removes it and
    /// names the clip (whole, still fragmented) to finish again.
    func testLeftoversOfAnInterruptedFinishAreRemoved() throws {
        let dir = RecordingProbe.tempDir("regular-leftover")
        let clip = dir + "/SHTR0007.MP4"
        let temp = RegularMP4.temporaryPath(for: clip)
        XCTAssertEqual(temp, dir + "/.SHTR0007.MP4.finishing")
        XCTAssertTrue(FileManager.default.createFile(atPath: clip, contents: Data([1])))
        XCTAssertTrue(FileManager.default.createFile(atPath: temp, contents: Data([2])))
        XCTAssertEqual(RegularMP4.removeLeftovers(in: dir), [clip])
        XCTAssertFalse(FileManager.default.fileExists(atPath: temp))
        XCTAssertTrue(FileManager.default.fileExists(atPath: clip), "the clip itself stays")
    }

    private func exiftool(_ path: String) throws -> [String: Any] {
        let out = try RecordingProbe.run("exiftool", ["-n", "-j", path])
        let list = try JSONSerialization.jsonObject(with: out.stdout) as? [[String: Any]]
        return try XCTUnwrap(list?.first, out.stderr)
    }

    private func ffprobeDuration(_ path: String) throws -> Double {
        let out = try RecordingProbe.run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path])
        return try XCTUnwrap(Double(String(decoding: out.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// gst-discoverer-1.0 prints "Duration: 0:00:05.000000000".
    private func discovererDuration(_ path: String) throws -> Double {
        let out = try RecordingProbe.run("gst-discoverer-1.0", [path])
        let text = String(decoding: out.stdout, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.contains("Duration:") }) else {
            throw XCTSkip("gst-discoverer-1.0 printed no duration: \(text) \(out.stderr)")
        }
        let parts = line.split(separator: " ").last!.split(separator: ":").compactMap { Double($0) }
        XCTAssertEqual(parts.count, 3, String(line))
        return parts[0] * 3600 + parts[1] * 60 + parts[2]
    }
}
