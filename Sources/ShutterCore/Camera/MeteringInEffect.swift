// SPDX-License-Identifier: BSD-2-Clause
/// How a frame's exposure was metered, for EXIF MeteringMode and `status`:
/// a metering mode (`camera.exposure.metering`), or the exposure window
/// (`camera.exposure.window`, a focus point) where the camera honours one.
public enum MeteringInEffect: String, Codable, Sendable, Equatable {
    case centre, spot, average
    /// Metered on the exposure window only.
    case window

    /// What a camera with metering does with `controls`: the window when it
    /// honours one and one is asked for, else the mode.
    public init(_ controls: CameraControls, honoursWindow: Bool) {
        if honoursWindow, controls.exposure.window != nil {
            self = .window
            return
        }
        switch controls.exposure.metering {
        case .centre: self = .centre
        case .spot: self = .spot
        case .average: self = .average
        }
    }

    /// EXIF MeteringMode (EXIF 2.3, tag 0x9207).
    public var exifValue: UInt16 {
        switch self {
        case .average: return 1  // Average
        case .centre: return 2   // CenterWeightedAverage
        case .spot: return 3     // Spot
        case .window: return 6   // Partial
        }
    }
}
