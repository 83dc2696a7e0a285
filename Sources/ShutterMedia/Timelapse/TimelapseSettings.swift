// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// How a time-lapse film is encoded: the clips' encoder (the board's `video.encoder`, with
/// its preset and bitrate), a frame rate of its own, and a size.
public struct TimelapseSettings: Sendable, Equatable {
    /// Frames per second of the film: each photo lasts 1/fps s.
    public var fps: Int
    /// The film's size; nil: the first photo's, shrunk to fit `largest` (aspect kept).
    public var size: PixelSize?
    /// The largest film made without a size asked for (1080p: what every player and the
    /// Pi's hardware encoder take).
    public var largest = PixelSize(width: 1920, height: 1080)
    /// FFmpeg's encoder ("libx264", "h264_v4l2m2m"), as the clips'.
    public var videoEncoder: String
    public var preset: String
    /// Bits/s; 0: constant quality (`crf`) with libx264, ~0.125 bit/pixel with others.
    public var videoBitrate: Int
    public var crf: Int
    /// Encoder threads (0: automatic).
    public var threads: Int
    /// What the film says about itself (make, model, software, display orientation).
    public var labels: ClipLabels
    /// Kept free on the card besides the film (`storage.minFreeMB`).
    public var minFreeBytes: UInt64

    public static let fpsRange = 1...120
    public static let sizeRange = 16...4096

    public init(fps: Int = 25, size: PixelSize? = nil, videoEncoder: String = "libx264", preset: String = "veryfast",
                videoBitrate: Int = 0, crf: Int = 20, threads: Int = 2, labels: ClipLabels = ClipLabels(),
                minFreeBytes: UInt64 = 0) {
        self.fps = fps
        self.size = size
        self.videoEncoder = videoEncoder
        self.preset = preset
        self.videoBitrate = videoBitrate
        self.crf = crf
        self.threads = threads
        self.labels = labels
        self.minFreeBytes = minFreeBytes
    }

    /// The film's size for a first photo of `first`: the size asked for, or the photo's
    /// shrunk to fit `largest` with its aspect, even in both directions (4:2:0).
    public func filmSize(first: PixelSize) -> PixelSize {
        if let size { return size }
        let scale = min(1, Double(largest.width) / Double(first.width), Double(largest.height) / Double(first.height))
        func even(_ v: Double) -> Int { max(16, Int(v.rounded(.down)) & ~1) }
        return PixelSize(width: even(Double(first.width) * scale), height: even(Double(first.height) * scale))
    }

    /// The card space a film of `frames` at `size` is taken to need, at its peak: the film
    /// written once while it is encoded and once more as the finished MP4. A frame is taken
    /// at 1 bit a pixel (libx264's constant quality on photos that change between frames
    /// stays below it), or at the bitrate's share when one is set.
    public func bytesNeeded(frames: Int, size: PixelSize) -> UInt64 {
        let perFrame = videoBitrate > 0 ? UInt64(videoBitrate / max(1, fps) / 8) : UInt64(size.width * size.height / 8)
        return 2 * UInt64(frames) * max(perFrame, 1) + 1_048_576
    }

    /// Refuses what the encoder cannot take, in words that name the option.
    public func validate() throws(TimelapseError) {
        guard Self.fpsRange.contains(fps) else {
            throw TimelapseError(.invalidSettings, "fps \(fps) is outside \(Self.fpsRange.lowerBound)...\(Self.fpsRange.upperBound)")
        }
        if let size {
            guard Self.sizeRange.contains(size.width), Self.sizeRange.contains(size.height),
                  size.width % 2 == 0, size.height % 2 == 0 else {
                throw TimelapseError(.invalidSettings, "size \(size) must be even numbers within "
                                     + "\(Self.sizeRange.lowerBound)...\(Self.sizeRange.upperBound), e.g. 1920x1080")
            }
        }
    }
}
