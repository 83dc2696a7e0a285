// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import ShutterMedia
import XCTest

final class RecordingSegmentTests: XCTestCase {
    /// Frames carry their number; decoding every segment must give 0, 1, 2, ... with no
    /// number missing or repeated at a boundary, and each segment's audio must cover it.
    func testSegmentsFollowEachOtherWithoutAGap() throws {
        let dir = RecordingProbe.tempDir("segments")
        var s = RecordingSettings(preset: "ultrafast", segmentSeconds: 1)
        s.queueFrames = 400
        let summary = try SyntheticRecording(frames: 135, stamp: true).record(s, to: dir, name: "seg")
        XCTAssertNil(summary.error)
        XCTAssertEqual(summary.paths.count, 5, "4.5 s in 1 s segments")
        var all: [Int] = []
        var total = 0.0
        for path in summary.paths {
            XCTAssertEqual(try RecordingProbe.decodeErrors(path), "", path)
            let stamps = try RecordingProbe.stamps(path, width: 320, height: 240)
            all += stamps
            let streams = try RecordingProbe.streams(path)
            XCTAssertEqual(streams.map(\.type), ["video", "audio"], path)
            let videoSeconds = Double(stamps.count) / 30
            XCTAssertEqual(streams[0].duration, videoSeconds, accuracy: 1.0 / 30, path)
            XCTAssertEqual(streams[1].duration, videoSeconds, accuracy: 1.0 / 30, path)
            total += videoSeconds
        }
        XCTAssertEqual(all, Array(0..<135))
        XCTAssertEqual(total, 4.5, accuracy: 0.001)
        XCTAssertEqual(summary.framesWritten, 135)
    }
}

/// `video.keyframeIntervalMs`: keyframes (and so fragments) at the set interval.
final class RecordingKeyframeTests: XCTestCase {
    private func keyframeTimes(_ path: String) throws -> [Double] {
        let out = try RecordingProbe.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                     "packet=pts_time,flags", "-of", "csv=p=0", path])
        return String(decoding: out.stdout, as: UTF8.self).split(separator: "\n").compactMap { line in
            let f = line.split(separator: ",")
            guard f.count >= 2, f[1].hasPrefix("K") else { return nil }
            return Double(f[0])
        }
    }

    func testKeyframesFollowTheConfiguredInterval() throws {
        for (interval, expected) in [(Duration.milliseconds(500), [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]),
                                     (Duration.seconds(1), [0.0, 1.0, 2.0])] {
            let dir = RecordingProbe.tempDir("keyframes")
            // A queue as long as the clip: frames are fed faster than real time.
            var settings = RecordingSettings(preset: "ultrafast", audioChannels: 0, queueFrames: 100)
            settings.keyframeInterval = interval
            let summary = try SyntheticRecording().record(settings, to: dir)
            XCTAssertNil(summary.error)
            XCTAssertEqual(summary.framesWritten, 90)
            let times = try keyframeTimes(try XCTUnwrap(summary.paths.first))
            XCTAssertEqual(times.count, expected.count, "\(times)")
            for (t, e) in zip(times, expected) { XCTAssertEqual(t, e, accuracy: 0.04) }
        }
    }
}
