// SPDX-License-Identifier: BSD-2-Clause
/// How far apart the camera's frames are: the nominal period (`video.fps`), or the last
/// frame's exposure when it is longer, since a frame lasts at least its exposure
/// (libcamera's FrameDurationLimits: a 4 s shutter gives a frame every 4 s). Every wait
/// for "the next frame" is measured in it, not in a fixed time that assumes 30 fps.
/// The exposure, not the time between frames, sets it: a stall must not stretch the
/// patience for the next one.
public struct FramePace: Sendable, Equatable {
    public let nominal: Duration
    public private(set) var period: Duration

    public init(fps: Int) {
        nominal = .nanoseconds(1_000_000_000 / Int64(max(fps, 1)))
        period = nominal
    }

    /// A frame with this exposure arrived.
    public mutating func frame(exposure: Duration?) {
        period = max(nominal, exposure ?? .zero)
    }

    /// `base`, or three frame periods when that is longer (a 4 s exposure: 12 s). At video
    /// rates `base` (the configured timeouts) decides alone.
    public func patience(_ base: Duration) -> Duration {
        max(base, period * 3)
    }
}
