// SPDX-License-Identifier: BSD-2-Clause
/// The flash mode and `video.torch` the machine works with. The service's
/// runtime settings own them (`flash.mode`, `video.torch`: set, reset, reread,
/// remembered in the state file); the machine keeps neither and is given them
/// with every input. A double tap asks for the next mode (`.flashModeChanged`)
/// and the service writes it to its settings, so there is one copy to read.
public struct CaptureLights: Equatable, Sendable {
    public var flashMode: FlashMode
    /// The flash LED glows through every clip (read when a clip starts: a clip
    /// in progress keeps the light it started with).
    public var videoTorch: Bool

    public init(flashMode: FlashMode = .off, videoTorch: Bool = false) {
        self.flashMode = flashMode
        self.videoTorch = videoTorch
    }
}
