// SPDX-License-Identifier: BSD-2-Clause
/// How far apart the camera's frames are: the nominal period (`video.fps`), the last
/// frame's exposure when it is longer (a frame lasts at least its exposure: libcamera's
/// FrameDurationLimits, a 4 s shutter gives a frame every 4 s), or the shortest of the last
/// three intervals between frames when that is longer still (a camera slower than it says:
/// vimc under emulation delivers every 3 s). Every wait for "the next frame" is measured in
/// it, not in a fixed time that assumes 30 fps. The shortest interval, not the last: one
/// stall must not stretch the patience for the next.
public struct FramePace: Sendable, Equatable {
    public let nominal: Duration
    public private(set) var period: Duration
    private var last: MonotonicTime?
    private var intervals: [Duration] = []

    public init(fps: Int) {
        nominal = .nanoseconds(1_000_000_000 / Int64(max(fps, 1)))
        period = nominal
    }

    /// A frame arrived at `time` with this exposure.
    public mutating func frame(at time: MonotonicTime, exposure: Duration?) {
        if let last, time > last {
            intervals.append(time - last)
            if intervals.count > 3 { intervals.removeFirst() }
        }
        last = time
        let observed = intervals.min() ?? .zero
        period = max(nominal, exposure ?? .zero, observed)
    }

    /// `base`, or three frame periods when that is longer (a 4 s exposure: 12 s). At video
    /// rates `base` (the configured timeouts) decides alone.
    public func patience(_ base: Duration) -> Duration {
        max(base, period * 3)
    }
}
