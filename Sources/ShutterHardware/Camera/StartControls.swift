// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

extension LibcameraCameraSettings {
    /// The controls a start of `role` gets besides `controls` (which both roles
    /// share): its own `FrameDurationLimits`. They are set before every start,
    /// because libcamera keeps them (the Raspberry Pi IPA remembers the last
    /// limits across a mode switch): a still started after video must not
    /// inherit the video's 1/fps, which would cap its exposure in the dark.
    ///
    /// - Video: both limits 1/`framesPerSecond`, a steady rate for the
    ///   encoder (nothing when the rate is 0: the pipeline's own).
    /// - Still: from the shortest frame up to `stillLongestFrame` (rpicam-still
    ///   allows up to 1000 s and lets the exposure profile decide; the bound
    ///   here keeps a still within its timeout), stretched to fit a longer
    ///   manual shutter.
    ///
    /// `sensorRange` is the camera's FrameDurationLimits range in µs after the
    /// role's configure, when known; the limits are clamped into it (the
    /// pipeline clamps too; this keeps what is logged honest).
    public func startControls(for role: CameraStreamRole, sensorRange: ClosedRange<Double>? = nil) -> [ControlSetting] {
        guard let limits = frameDurationLimits(for: role, sensorRange: sensorRange) else { return [] }
        return [ControlSetting(name: "FrameDurationLimits", values: [limits.lowerBound, limits.upperBound])]
    }

    /// The FrameDurationLimits of `startControls`, in µs.
    public func frameDurationLimits(for role: CameraStreamRole, sensorRange: ClosedRange<Double>? = nil)
        -> ClosedRange<Double>?
    {
        let wanted: ClosedRange<Double>
        switch role {
        case .video:
            guard framesPerSecond > 0 else { return nil }
            let us = (1_000_000 / framesPerSecond).rounded()
            wanted = us...us
        case .still:
            var longest = Double(max(0, stillLongestFrame.microseconds))
            if let shutter = controls.exposure.fixedShutterMicroseconds {
                // A frame is a little longer than its exposure (a few lines of blanking).
                longest = max(longest, Double(shutter) + 1000)
            }
            let shortest = Self.shortestStillFrameMicroseconds
            wanted = shortest...max(shortest, longest)
        }
        guard let sensor = sensorRange, sensor.lowerBound > 0 || sensor.upperBound > 0 else { return wanted }
        let lower = min(max(wanted.lowerBound, sensor.lowerBound), sensor.upperBound)
        let upper = min(max(wanted.upperBound, sensor.lowerBound), sensor.upperBound)
        return lower...max(lower, upper)
    }

    /// 100 µs, as rpicam-still asks: in practice the sensor mode's shortest frame.
    static let shortestStillFrameMicroseconds = 100.0

    /// How long a still may take to arrive after the switch: `stillTimeout`, or
    /// longer when the warm-up frames and the still itself may each last
    /// `stillLongestFrame` (a dark scene), plus one frame for the start.
    public var stillWaitTimeout: Duration {
        let longest = (frameDurationLimits(for: .still)?.upperBound).map { Duration.microseconds(Int64($0)) } ?? .zero
        return max(stillTimeout, longest * (max(0, stillWarmupFrames) + 2) + .milliseconds(500))
    }
}

extension Duration {
    /// Whole microseconds, rounded toward zero.
    var microseconds: Int64 {
        let (s, atto) = components
        return s * 1_000_000 + atto / 1_000_000_000_000
    }
}
