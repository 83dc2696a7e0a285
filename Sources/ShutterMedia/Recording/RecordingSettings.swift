// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

/// How a clip is encoded. Comes from the board file (encoder) and the config (`video.*`).
public struct RecordingSettings: Sendable, Equatable {
    /// FFmpeg encoder name: "h264_v4l2m2m" (Pi 4/3/Zero 2 W hardware) or "libx264" (Pi 5, x86).
    public var videoEncoder: String
    /// libx264 preset; must keep up in real time on the board's CPU. Ignored by other encoders.
    public var preset: String
    /// Nominal frame rate: the GOP (one keyframe, hence one MP4 fragment, per second) and rate control.
    public var fps: Int
    /// Video bits/s; 0 = constant quality (`crf`) for libx264, ~0.125 bit/pixel for others.
    public var videoBitrate: Int
    /// libx264 constant rate factor when `videoBitrate` is 0.
    public var crf: Int
    /// Encoder threads, 0 = automatic.
    public var threads: Int
    /// 0 = no audio track; 1 (mono) or 2 (stereo).
    public var audioChannels: Int
    public var audioSampleRate: Int
    public var audioBitrate: Int
    /// Split a long recording into files of about this length (at a keyframe); 0 = one file.
    public var segmentSeconds: Double
    /// Frames that may wait for the encoder; beyond that new frames are dropped (and counted)
    /// so the camera is never blocked. Each waiting frame holds one copy of its pixels.
    /// An encoder slower than the camera keeps this queue full, and the durable point then
    /// trails the camera by queueFrames encode times (see `Recorder.durable`).
    public var queueFrames: Int
    /// At most this long between fdatasyncs of the open file; each whole fragment is also
    /// synced as soon as it is written.
    public var syncInterval: Duration
    /// Time between keyframes, which are also the MP4 fragment boundaries: what a power cut
    /// loses at most when the encoder keeps up (the open fragment). Default 1 s.
    public var keyframeInterval: Duration = .seconds(1)
    /// What each file says about itself (make, model, software, display orientation).
    public var labels = ClipLabels()
    /// The time stamp drawn into each frame's copy (docs/overlay.md); nil = none.
    public var overlay: TextOverlay?

    /// The keyframe interval in frames at `fps` (at least 1).
    public var keyframeFrames: Int {
        max(1, Int((Double(keyframeInterval.nanoseconds) * Double(fps) / 1e9).rounded()))
    }

    public init(videoEncoder: String = "libx264", preset: String = "veryfast", fps: Int = 30,
                videoBitrate: Int = 0, crf: Int = 23, threads: Int = 0,
                audioChannels: Int = 1, audioSampleRate: Int = 48_000, audioBitrate: Int = 128_000,
                segmentSeconds: Double = 0, queueFrames: Int = 12, syncInterval: Duration = .seconds(1)) {
        self.videoEncoder = videoEncoder
        self.preset = preset
        self.fps = fps
        self.videoBitrate = videoBitrate
        self.crf = crf
        self.threads = threads
        self.audioChannels = audioChannels
        self.audioSampleRate = audioSampleRate
        self.audioBitrate = audioBitrate
        self.segmentSeconds = segmentSeconds
        self.queueFrames = queueFrames
        self.syncInterval = syncInterval
    }

    /// Throws `RecordingError.invalidSettings` naming the first bad field.
    public func validate() throws(RecordingError) {
        func bad(_ what: String) -> RecordingError {
            RecordingError(.invalidSettings, "recording setting \(what); fix it in the configuration")
        }
        if videoEncoder.isEmpty { throw bad("videoEncoder is empty") }
        if fps < 1 || fps > 240 { throw bad("fps \(fps) is outside 1...240") }
        if videoBitrate < 0 { throw bad("videoBitrate \(videoBitrate) is negative") }
        if crf < 0 || crf > 51 { throw bad("crf \(crf) is outside 0...51") }
        if threads < 0 { throw bad("threads \(threads) is negative") }
        if !(0...2).contains(audioChannels) { throw bad("audioChannels \(audioChannels) is not 0, 1 or 2") }
        if audioChannels > 0 && audioSampleRate != 48_000 && audioSampleRate != 44_100 {
            throw bad("audioSampleRate \(audioSampleRate) is not 48000 or 44100")
        }
        if audioBitrate < 0 { throw bad("audioBitrate \(audioBitrate) is negative") }
        if segmentSeconds < 0 || (segmentSeconds > 0 && segmentSeconds < 1) {
            throw bad("segmentSeconds \(segmentSeconds) must be 0 (off) or at least 1")
        }
        if queueFrames < 2 { throw bad("queueFrames \(queueFrames) is below 2") }
        if keyframeInterval < .milliseconds(100) || keyframeInterval > .seconds(10) {
            throw bad("keyframeInterval must be 0.1 to 10 s")
        }
        if syncInterval <= .zero || syncInterval > .seconds(2) {
            throw bad("syncInterval must be above 0 and at most 2 s")
        }
    }
}

/// What a clip's file says about the camera that made it: the same make, model and
/// software as the photos' EXIF, and how to turn the picture for display (the rotation
/// and flips the camera was set to, when the sensor did not apply them).
public struct ClipLabels: Sendable, Equatable {
    public var make = ""
    public var model = ""
    public var software = ""
    public var rotation = 0
    public var hflip = false
    public var vflip = false

    public init(make: String = "", model: String = "", software: String = "", rotation: Int = 0,
                hflip: Bool = false, vflip: Bool = false) {
        self.make = make
        self.model = model
        self.software = software
        self.rotation = rotation
        self.hflip = hflip
        self.vflip = vflip
    }

    /// ISO 8601 in UTC with microseconds ("2026-12-02T14:33:57.123456Z"), as the MP4
    /// muxer takes a creation time; nil for an untrusted clock (no date beats a wrong one).
    public static func creationTime(_ t: WallTime) -> String? {
        guard t.isTrusted else { return nil }
        var secs = time_t(t.secondsSinceEpoch)
        var tm = tm()
        guard gmtime_r(&secs, &tm) != nil else { return nil }
        return cFormat("%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", Int(tm.tm_year) + 1900, Int(tm.tm_mon) + 1,
                      Int(tm.tm_mday), Int(tm.tm_hour), Int(tm.tm_min), Int(tm.tm_sec), Int(t.nanoseconds / 1000))
    }
}
