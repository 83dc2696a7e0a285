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
