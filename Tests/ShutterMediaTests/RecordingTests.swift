// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import ShutterMedia
import XCTest

/// Clips checked by ffprobe/ffmpeg: streams, durations, A/V placement, formats, errors.
final class RecordingTests: XCTestCase {
    private func settings(queue: Int = 400) -> RecordingSettings {
        var s = RecordingSettings(preset: "ultrafast")
        s.queueFrames = queue
        return s
    }

    func testClipHasOneH264AndOneAACStreamWhoseDurationsMatchTheInput() throws {
        let dir = RecordingProbe.tempDir("clip")
        let summary = try SyntheticRecording(frames: 90).record(settings(), to: dir)
        XCTAssertNil(summary.error)
        XCTAssertEqual(summary.paths, ["\(dir)/clip1.mp4"])
        XCTAssertEqual(summary.framesWritten, 90)
        XCTAssertEqual(summary.framesDropped, 0)
        let path = summary.paths[0]
        let streams = try RecordingProbe.streams(path, countFrames: true)
        XCTAssertEqual(streams.map(\.type), ["video", "audio"])
        let v = streams[0], a = streams[1]
        XCTAssertEqual(v.codec, "h264")
        XCTAssertEqual(a.codec, "aac")
        XCTAssertEqual(v.width, 320)
        XCTAssertEqual(v.height, 240)
        XCTAssertEqual(v.frames, 90)
        XCTAssertEqual(a.sampleRate, 48_000)
        XCTAssertEqual(a.channels, 1)
        let frame = 1.0 / 30
        XCTAssertEqual(v.duration, 3.0, accuracy: frame, "video duration")
        XCTAssertEqual(a.duration, 3.0, accuracy: frame, "audio duration")
        XCTAssertEqual(abs(v.startTime - a.startTime), 0, accuracy: 0.040, "A/V start offset")
        XCTAssertEqual(try RecordingProbe.decodeErrors(path), "")
    }

    /// Where each track's content really starts, from the packet timestamps after the first
    /// (the muxer stretches a track's first sample to time 0 in a fragmented MP4).
    func testAudioAndVideoKeepTheirOffsetsOnOneTimeline() throws {
        let dir = RecordingProbe.tempDir("offset")
        // The microphone runs before the press (cut at the press); the first frame is 12 ms late.
        let rec = SyntheticRecording(frames: 60, videoOffset: .milliseconds(12), audioOffset: .milliseconds(-50),
                                     audioSeconds: 2.1)
        var s = settings()
        s.audioChannels = 2
        let summary = try rec.record(s, to: dir)
        XCTAssertNil(summary.error)
        let path = try XCTUnwrap(summary.paths.first)
        let v = try RecordingProbe.packetTimes(path, "v"), a = try RecordingProbe.packetTimes(path, "a")
        XCTAssertEqual(v.count, 60)
        // Packet 1 minus one frame period; both tracks share the muxer's shift.
        let videoStart = v[1] - 1.0 / 30
        // AAC packet 0 is the encoder's priming frame (pts -1024 samples before the muxer's
        // shift); packet 1 carries the first sample's timestamp.
        let audioStart = a[1]
        XCTAssertEqual(videoStart - audioStart, 0.012, accuracy: 0.002, "video starts 12 ms after the audio")
        XCTAssertLessThan(abs(videoStart - audioStart), 0.040)
        let streams = try RecordingProbe.streams(path)
        XCTAssertEqual(streams[1].channels, 2)
        XCTAssertLessThan(abs(streams[0].startTime - streams[1].startTime), 0.040)
        XCTAssertEqual(try RecordingProbe.decodeErrors(path), "")
    }

    /// Samples the microphone lost become silence in place: the track keeps its length and
    /// everything after the overrun stays in sync; the loss is counted.
    func testAudioOverrunsAreCountedAndFilledWithSilence() throws {
        let dir = RecordingProbe.tempDir("overrun")
        let rec = SyntheticRecording(frames: 90, lostAudioChunks: [40, 41, 42, 100])
        let summary = try rec.record(settings(), to: dir)
        XCTAssertNil(summary.error)
        XCTAssertEqual(summary.audioOverrunFrames, 4 * 960)
        XCTAssertEqual(summary.audioFramesWritten, 146 * 960, "3 s of chunks but the 4 lost")
        let path = try XCTUnwrap(summary.paths.first)
        let streams = try RecordingProbe.streams(path)
        XCTAssertEqual(streams[1].duration, 3.0, accuracy: 1.0 / 30)
        let a = try RecordingProbe.packetTimes(path, "a")
        // Evenly spaced packets: no hole and no jump in the audio timeline.
        for k in 2..<a.count { XCTAssertEqual(a[k] - a[k - 1], 1024.0 / 48_000, accuracy: 1e-4, "packet \(k)") }
        XCTAssertEqual(try RecordingProbe.decodeErrors(path), "")
    }

    func testNV12AndRGBFramesAreEncoded() throws {
        for format in [PixelFormat.nv12, .rgb24, .bgr24] {
            let dir = RecordingProbe.tempDir("fmt")
            let summary = try SyntheticRecording(frames: 20, stamp: true, format: format).record(settings(), to: dir)
            XCTAssertNil(summary.error, "\(format)")
            let path = try XCTUnwrap(summary.paths.first)
            XCTAssertEqual(try RecordingProbe.decodeErrors(path), "", "\(format)")
            XCTAssertEqual(try RecordingProbe.stamps(path, width: 320, height: 240), Array(0..<20), "\(format)")
        }
    }

    func testFramesBeforeTheStartAreSkippedAndAFullQueueDropsAndCounts() throws {
        let dir = RecordingProbe.tempDir("drops")
        var s = settings(queue: 2)
        s.preset = "medium"
        let start = MonotonicTime(nanoseconds: 5_000_000_000)
        let recorder = try Recorder(settings: s, start: start, nextPath: { "\(dir)/d.mp4" })
        let video = SyntheticVideo(width: 640, height: 360)
        XCTAssertFalse(recorder.append(video.frame(index: 0, timestamp: start - .milliseconds(10))))
        var accepted = 0
        for i in 0..<60 where recorder.append(video.frame(index: i, timestamp: start + .milliseconds(Int64(i) * 33))) {
            accepted += 1
        }
        let summary = recorder.finish()
        XCTAssertEqual(summary.framesSkipped, 1)
        XCTAssertGreaterThan(summary.framesDropped, 0, "60 frames at once into a queue of 2 must drop")
        XCTAssertEqual(summary.framesDropped + accepted, 60)
        XCTAssertEqual(summary.framesWritten, accepted)
        let streams = try RecordingProbe.streams(dir + "/d.mp4", countFrames: true)
        XCTAssertEqual(streams.first?.frames, accepted)
    }

    func testAMissingEncoderIsATypedErrorNamingIt() {
        var s = settings()
        s.videoEncoder = "h264_nosuchencoder"
        XCTAssertThrowsError(try Recorder(settings: s, start: .milliseconds(0), nextPath: { "/tmp/x.mp4" })) { e in
            let error = e as? RecordingError
            XCTAssertEqual(error?.code, .encoderMissing)
            XCTAssertTrue(error?.message.contains("h264_nosuchencoder") ?? false)
        }
    }

    func testAnEncoderThatWillNotOpenStopsTheClipWithAnError() throws {
        // h264_v4l2m2m is compiled into Debian's libavcodec but this machine has no
        // V4L2 encoder device: the error must say so and leave no file behind.
        let dir = RecordingProbe.tempDir("v4l2")
        var s = settings()
        s.videoEncoder = "h264_v4l2m2m"
        let summary = try SyntheticRecording(frames: 5).record(s, to: dir)
        XCTAssertEqual(summary.error?.code, .encoderFailed)
        XCTAssertTrue(summary.error?.message.contains("h264_v4l2m2m") ?? false, summary.error?.message ?? "")
        XCTAssertEqual(summary.paths, [])
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/clip1.mp4"))
    }

    func testInvalidSettingsAreRejectedByName() {
        var s = settings()
        s.segmentSeconds = 0.5
        XCTAssertThrowsError(try s.validate()) { e in
            XCTAssertEqual((e as? RecordingError)?.code, .invalidSettings)
            XCTAssertTrue((e as? RecordingError)?.message.contains("segmentSeconds") ?? false)
        }
    }
}
