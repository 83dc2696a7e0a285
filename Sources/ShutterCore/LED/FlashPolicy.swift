// SPDX-License-Identifier: BSD-2-Clause
/// Decides whether the flash fires for a still (or the torch lights for a clip)
/// from the mode and the scene as the camera metered it.
public struct FlashPolicy: Equatable, Sendable {
    /// Below this many lux the scene is dark (libcamera's Lux estimate).
    public var darkLux: Double
    /// When lux is unknown: exposure time (µs) × analogue × digital gain above
    /// this is dark. 100 000 ≈ 33 ms at gain 3, where the AGC has run out of room.
    public var darkExposureGain: Double

    public init(darkLux: Double = 30, darkExposureGain: Double = 100_000) {
        self.darkLux = darkLux
        self.darkExposureGain = darkExposureGain
    }

    /// True when the scene counts as dark. With no usable metadata the answer
    /// is false: a surprise flash is worse than a dim photo, and "on" exists.
    public func isDark(_ metadata: FrameMetadata?) -> Bool {
        guard let m = metadata else { return false }
        if let lux = m.lux { return lux < darkLux }
        guard let exposure = m.exposureTimeMicroseconds, let gain = m.analogueGain else { return false }
        return Double(exposure) * gain * (m.digitalGain ?? 1) > darkExposureGain
    }

    public func shouldFire(mode: FlashMode, scene: FrameMetadata?) -> Bool {
        switch mode {
        case .off: return false
        case .on: return true
        case .auto: return isDark(scene)
        }
    }
}
