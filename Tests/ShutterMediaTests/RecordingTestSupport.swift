// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import ShutterMedia
import Synchronization
import XCTest

/// Checks recordings with FFmpeg's command-line tools (not with the code under test).
enum RecordingProbe {
    struct Output { var status: Int32; var stdout: Data; var stderr: String }

    static func run(_ tool: String, _ args: [String]) throws -> Output {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [tool] + args
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        // Read both pipes to the end before waiting, so a big output cannot block the child.
        let errData = LockedData()
        let t = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
        t.start()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        while !errData.isSet { usleep(1000) }
        return Output(status: p.terminationStatus, stdout: o, stderr: String(decoding: errData.get(), as: UTF8.self))
    }

    struct Stream {
        var type: String, codec: String, startTime: Double, duration: Double
        var sampleRate: Int?, channels: Int?, width: Int?, height: Int?, frames: Int?
    }

    static func streams(_ path: String, countFrames: Bool = false) throws -> [Stream] {
        let out = try run("ffprobe", ["-v", "error"] + (countFrames ? ["-count_frames"] : []) +
                          ["-show_streams", "-of", "json", path])
        let json = try JSONSerialization.jsonObject(with: out.stdout) as? [String: Any]
        let list = json?["streams"] as? [[String: Any]] ?? []
        return list.map { s in
            Stream(type: s["codec_type"] as? String ?? "", codec: s["codec_name"] as? String ?? "",
                   startTime: Double(s["start_time"] as? String ?? "") ?? .nan,
                   duration: Double(s["duration"] as? String ?? "") ?? .nan,
                   sampleRate: Int(s["sample_rate"] as? String ?? ""), channels: s["channels"] as? Int,
                   width: s["width"] as? Int, height: s["height"] as? Int,
                   frames: Int(s["nb_read_frames"] as? String ?? ""))
        }
    }

    /// pts (seconds) of the packets of one stream ("v" or "a"), in file order.
    static func packetTimes(_ path: String, _ stream: String) throws -> [Double] {
        let out = try run("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries",
                                      "packet=pts_time", "-of", "csv=p=0", path])
        return String(decoding: out.stdout, as: UTF8.self).split(separator: "\n").compactMap { Double($0) }
    }

    /// Where the video ends on the file's timeline (s): the stream's start + duration, which
    /// for a fragmented MP4 adds up the samples' durations in the fragments (ffprobe's packet
    /// durations are the codec's nominal frame time, not the file's).
    static func videoEnd(_ path: String) throws -> Double {
        guard let v = try streams(path).first(where: { $0.type == "video" }) else { return 0 }
        return v.startTime + v.duration
    }

    /// What `ffmpeg -v error -i f -f null -` says: empty when the file decodes cleanly.
    static func decodeErrors(_ path: String) throws -> String {
        let out = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "null", "-"])
        return out.status == 0 ? out.stderr : "exit \(out.status): \(out.stderr)"
    }

    /// Frame numbers stamped by SyntheticVideo.stampedFrame, read from ffmpeg's decode.
    static func stamps(_ path: String, width: Int, height: Int) throws -> [Int] {
        let out = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v", "-fps_mode", "passthrough", "-f", "rawvideo",
                                     "-pix_fmt", "gray", "-"])
        let size = width * height
        return stride(from: 0, to: out.stdout.count - size + 1, by: size).map { off in
            out.stdout.withUnsafeBytes { raw in
                SyntheticVideo.readStamp(gray: UnsafeBufferPointer(
                    start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + off, count: size), width: width)
            }
        }
    }

    static func tempDir(_ name: String) -> String {
        let dir = NSTemporaryDirectory() + "shutter-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// The build's products directory (where shutter-media-tool lives).
    static var productsDirectory: URL {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("shutter-media-tool").path) {
            url = url.deletingLastPathComponent()
        }
        return url
    }
}

final class LockedData: Sendable {
    private let state = Mutex<(data: Data, done: Bool)>((Data(), false))
    func set(_ d: Data) { state.withLock { $0 = (d, true) } }
    func get() -> Data { state.withLock { $0.data } }
    var isSet: Bool { state.withLock { $0.done } }
}

/// Feeds a Recorder with synthetic frames and tone on synthetic timestamps (as fast as it
/// encodes; the queue is made big enough that nothing is dropped unless a test wants it).
struct SyntheticRecording {
    var width = 320, height = 240, fps = 30
    var frames = 90
    var videoOffset: Duration = .zero       // first frame after the press
    /// Frame i's time after the press, when not evenly spaced at `fps` (then videoOffset is unused).
    var frameTime: (@Sendable (Int) -> Duration)? = nil
    var audioOffset: Duration = .zero       // first audio sample relative to the press
    var audioSeconds: Double? = nil         // default: as long as the video
    var stamp = false
    var format: PixelFormat = .i420
    /// Chunks the "microphone" loses (overrun): the next chunk reports them as dropped.
    var lostAudioChunks: Set<Int> = []
    /// The wall time of a point of the timeline (the files' creation time); nil: undated.
    var wallTime: (@Sendable (MonotonicTime) -> WallTime)? = nil
    /// The press every recording starts at (frames come after it).
    static let start = MonotonicTime(nanoseconds: 1_000_000_000_000)

    func record(_ settings: RecordingSettings, to dir: String, name: String = "clip",
                onDurable: (@Sendable (DurableMark) -> Void)? = nil) throws -> RecordingSummary {
        let start = Self.start
        let counter = LockedCounter()
        let recorder = try Recorder(settings: settings, start: start, nextPath: {
            "\(dir)/\(name)\(counter.next()).mp4"
        }, onDurable: onDurable, wallTime: wallTime)
        let video = SyntheticVideo(width: width, height: height)
        let audio = SyntheticAudio(channels: max(1, settings.audioChannels))
        let audioStart = start + audioOffset
        let audioChunks = Int(((audioSeconds ?? Double(frames) / Double(fps)) * 48_000 / Double(audio.chunkFrames)).rounded(.up))
        var nextChunk = 0
        var lost = 0
        func appendAudio(_ k: Int) {
            if lostAudioChunks.contains(k) { lost += audio.chunkFrames; return }
            recorder.append(audio.chunk(index: k, start: audioStart, droppedFramesBefore: lost))
            lost = 0
        }
        for i in 0..<frames {
            let t = start + (frameTime?(i) ?? videoOffset + .nanoseconds(Int64(i) * 1_000_000_000 / Int64(fps)))
            // Audio up to this frame's time first, as a live microphone would deliver it.
            while settings.audioChannels > 0, nextChunk < audioChunks,
                  audioStart + .nanoseconds(Int64(nextChunk * audio.chunkFrames) * 1_000_000_000 / 48_000) <= t {
                appendAudio(nextChunk)
                nextChunk += 1
            }
            let f = stamp ? video.stampedFrame(index: i, timestamp: t) : video.frame(index: i, timestamp: t)
            // Synthetic frames come as fast as they are drawn, not at a camera's pace: none left out.
            recorder.appendWaiting(format == .i420 ? f : convert(f, to: format))
        }
        while settings.audioChannels > 0, nextChunk < audioChunks {
            appendAudio(nextChunk)
            nextChunk += 1
        }
        return recorder.finish()
    }

    /// Repacks an I420 frame into another layout (tests of the conversion path).
    private func convert(_ f: Frame, to format: PixelFormat) -> Frame {
        let w = f.width, h = f.height
        let y = f.planes[0], u = f.planes[1], v = f.planes[2]
        func Y(_ x: Int, _ r: Int) -> UInt8 { y.base.load(fromByteOffset: r * y.stride + x, as: UInt8.self) }
        func U(_ x: Int, _ r: Int) -> UInt8 { u.base.load(fromByteOffset: r / 2 * u.stride + x / 2, as: UInt8.self) }
        func V(_ x: Int, _ r: Int) -> UInt8 { v.base.load(fromByteOffset: r / 2 * v.stride + x / 2, as: UInt8.self) }
        switch format {
        case .nv12:
            let buf = OwnedFrameBuffer(capacity: w * h * 3 / 2)
            let p = buf.bytes.assumingMemoryBound(to: UInt8.self)
            for r in 0..<h { for x in 0..<w { p[r * w + x] = Y(x, r) } }
            for r in 0..<(h / 2) { for x in 0..<(w / 2) { p[w * h + r * w + 2 * x] = U(2 * x, 2 * r); p[w * h + r * w + 2 * x + 1] = V(2 * x, 2 * r) } }
            let base = UnsafeRawPointer(buf.bytes)
            return Frame(width: w, height: h, format: .nv12,
                         planes: [FramePlane(base: base, stride: w, length: w * h),
                                  FramePlane(base: base + w * h, stride: w, length: w * h / 2)],
                         timestamp: f.timestamp, sequence: f.sequence, onRelease: { withExtendedLifetime(buf) {} })
        default:
            // rgb24 / bgr24 via BT.601 limited range.
            let buf = OwnedFrameBuffer(capacity: w * h * 3)
            let p = buf.bytes.assumingMemoryBound(to: UInt8.self)
            for r in 0..<h {
                for x in 0..<w {
                    let c = Double(Y(x, r)) - 16, d = Double(U(x, r)) - 128, e = Double(V(x, r)) - 128
                    let R = 1.164 * c + 1.596 * e, G = 1.164 * c - 0.392 * d - 0.813 * e, B = 1.164 * c + 2.017 * d
                    let px = [R, G, B].map { UInt8(max(0, min(255, $0))) }
                    let o = (r * w + x) * 3
                    if format == .rgb24 { p[o] = px[0]; p[o + 1] = px[1]; p[o + 2] = px[2] }
                    else { p[o] = px[2]; p[o + 1] = px[1]; p[o + 2] = px[0] }
                }
            }
            return Frame(width: w, height: h, format: format,
                         planes: [FramePlane(base: UnsafeRawPointer(buf.bytes), stride: w * 3, length: w * h * 3)],
                         timestamp: f.timestamp, sequence: f.sequence, onRelease: { withExtendedLifetime(buf) {} })
        }
    }
}

final class LockedCounter: Sendable {
    private let value = Mutex(0)
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}
