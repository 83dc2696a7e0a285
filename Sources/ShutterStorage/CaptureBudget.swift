// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// How much room a capture needs before it starts, so a photo or a clip is
/// refused (or room made) up front instead of failing half-written.
public struct CaptureBudget: Equatable, Sendable {
    public var photoBytes: UInt64
    public var videoBytes: UInt64

    public init(photoBytes: UInt64, videoBytes: UInt64) {
        self.photoBytes = photoBytes
        self.videoBytes = videoBytes
    }

    /// Photo: 0.75 byte per pixel, about twice a typical quality-93 JPEG
    /// (9 MB for 12 MP). Video: (video + audio bitrate) × max duration, plus 5 %
    /// for MP4 fragment headers and index.
    public init(config: ShutterConfig) {
        // The largest size it may be granted (the first preference, as a rule).
        let pixels = config.stillSizes.map { $0.width * $0.height }.max() ?? 0
        photoBytes = UInt64(pixels) * 3 / 4
        let kbps = UInt64(config.video.bitrateKbps) + (config.audio.enabled ? UInt64(config.audio.bitrateKbps) : 0)
        videoBytes = kbps * 1000 / 8 * UInt64(config.video.maxSeconds) * 105 / 100
    }

    public func bytes(for kind: Storage.MediaKind) -> UInt64 {
        kind == .photo ? photoBytes : videoBytes
    }
}
