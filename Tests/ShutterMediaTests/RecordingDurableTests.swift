// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import ShutterMedia
import Synchronization
import XCTest

final class RecordingDurableTests: XCTestCase {
    /// What the recorder reports durable is exact: the file as it was at each report (its
    /// first `bytes`, synced) decodes cleanly to exactly the frames and media time reported,
    /// which is what a power cut right after the sync leaves. With and without audio (the
    /// muxer's interleaving holds video back for the audio track). The camera leaves a gap
    /// of 5 frame times before each keyframe (a slow camera, an encoder dropping frames): a
    /// fragment ends where the next begins, not one nominal frame time after its last frame.
    func testEachDurableMarkIsAPrefixOfTheFileThatDecodesToIt() throws {
        // Frame i after the press: 1/30 s apart, 5/30 s before each keyframe (every 15 frames).
        let time: @Sendable (Int) -> Duration = { i in .nanoseconds(Int64(i + 4 * (i / 15)) * 1_000_000_000 / 30) }
        for channels in [0, 2] {
            let dir = RecordingProbe.tempDir("durable")
            var s = RecordingSettings(preset: "ultrafast")
            s.queueFrames = 400
            s.audioChannels = channels
            s.keyframeInterval = .milliseconds(500)
            let marks = Mutex<[DurableMark]>([])
            var rec = SyntheticRecording(width: 320, height: 240, frames: 75)
            rec.frameTime = time
            rec.audioSeconds = 3.1  // past the last frame (3.0 s): the muxer holds video until audio catches up
            let summary = try rec.record(s, to: dir, onDurable: { m in marks.withLock { $0.append(m) } })
            let path = try XCTUnwrap(summary.paths.first)
            let all = marks.withLock { $0 }
            let open = all.filter { !$0.complete }
            // 75 frames at 30 fps in 15-frame fragments: 4 synced while recording, 1 by the trailer.
            XCTAssertEqual(open.map(\.fragments), [1, 2, 3, 4], "\(channels) ch: one report per fragment")
            XCTAssertEqual(open.map(\.frames), [15, 30, 45, 60], "\(channels) ch")
            // On the 1/90000 s clock of the file (truncated like the recorder's timestamps).
            XCTAssertEqual(open.map(\.mediaTime), [15, 30, 45, 60].map { .nanoseconds(time($0).nanoseconds * 9 / 100_000 * 100_000 / 9) },
                           "\(channels) ch: each fragment ends at the next keyframe")
            XCTAssertEqual(open.map(\.capturedBefore.nanoseconds),
                           open.map { 1_000_000_000_000 + $0.mediaTime.nanoseconds }, "\(channels) ch")
            XCTAssertEqual(all.last?.complete, true, "\(channels) ch: the finished file is reported last")
            XCTAssertEqual(all.last?.frames, 75)
            XCTAssertEqual(all.last?.fragments, 5)
            // The last frame lasts as long as the one before it.
            XCTAssertEqual(Double(all.last?.mediaTime.nanoseconds ?? 0) / 1e9, Double(time(74).nanoseconds) / 1e9 + 1.0 / 30,
                           accuracy: 0.001)
            XCTAssertEqual(all.last.map { Int($0.bytes) },
                           (try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int)

            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            for m in open {
                let cut = "\(dir)/durable\(m.fragments).mp4"
                try data.prefix(Int(m.bytes)).write(to: URL(fileURLWithPath: cut))
                XCTAssertEqual(try RecordingProbe.decodeErrors(cut), "", "\(channels) ch, fragment \(m.fragments)")
                XCTAssertEqual(try RecordingProbe.streams(cut, countFrames: true).first?.frames, m.frames,
                               "\(channels) ch, fragment \(m.fragments): the frames reported, no more, no fewer")
                // The file's timeline may sit later by the AAC priming delay (1024 samples).
                let end = try RecordingProbe.videoEnd(cut)
                let mark = Double(m.mediaTime.nanoseconds) / 1e9
                XCTAssertGreaterThanOrEqual(end, mark - 0.000_02, "\(channels) ch, fragment \(m.fragments)")
                XCTAssertLessThanOrEqual(end, mark + (channels > 0 ? 1024.0 / 48_000 : 0) + 0.000_02,
                                         "\(channels) ch, fragment \(m.fragments): the video ends where reported")
            }
            try? FileManager.default.removeItem(atPath: dir)
        }
    }

    /// Keyframes come by time, not only by frame count: with every other frame dropped (an
    /// encoder or camera at half the rate) a count of `keyframeInterval` frames would span
    /// twice the interval, and so would the open fragment a power cut loses. Here fragments
    /// still end every 0.5 s of media (plus at most one frame period), each reported durable.
    func testDroppedFramesDoNotStretchTheFragmentsAPowerCutWouldLose() throws {
        let dir = RecordingProbe.tempDir("durable-drops")
        var s = RecordingSettings(preset: "ultrafast")
        s.queueFrames = 400
        s.audioChannels = 0
        s.keyframeInterval = .milliseconds(500)  // 15 frames at the nominal 30 fps
        let marks = Mutex<[DurableMark]>([])
        var rec = SyntheticRecording(width: 320, height: 240, frames: 60)
        rec.frameTime = { i in .nanoseconds(Int64(2 * i) * 1_000_000_000 / 30) }  // 15 fps: 4 s
        _ = try rec.record(s, to: dir, onDurable: { m in marks.withLock { $0.append(m) } })
        let open = marks.withLock { $0 }.filter { !$0.complete }
        let ends = [0.0] + open.map { Double($0.mediaTime.nanoseconds) / 1e9 }
        let spans = zip(ends.dropFirst(), ends).map { $0 - $1 }
        print("fragments with half the frames dropped: \(open.count) reported while recording, spans \(spans.map { String(format: "%.3f", $0) }) s")
        // By count alone: 15 frames = 1 s of media a fragment, 3 reported while recording.
        XCTAssertGreaterThanOrEqual(open.count, 6, "a fragment every ~0.53 s of the 4 s")
        for (i, span) in spans.enumerated() {
            XCTAssertLessThanOrEqual(span, 0.5 + 2.0 / 30 + 0.001, "fragment \(i + 1) spans \(span) s")
        }
        try? FileManager.default.removeItem(atPath: dir)
    }
}
