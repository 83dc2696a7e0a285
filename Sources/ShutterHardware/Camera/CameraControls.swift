/// Exposure and white balance as the service configures them. Turned into
/// libcamera controls by name, so one build works across libcamera releases;
/// controls a camera lacks are skipped and reported, never fatal.
public struct CameraControls: Sendable, Equatable {
    public enum Exposure: Sendable, Equatable {
        case auto
        /// nil leaves that half automatic (fixed shutter with auto gain, or the reverse).
        case manual(shutterMicroseconds: Int?, analogueGain: Double?)
    }

    public enum Metering: Int, Sendable, Codable {
        case centreWeighted = 0, spot = 1, matrix = 2
    }

    /// libcamera's AeExposureMode: which way AE trades shutter for gain.
    public enum ExposureProfile: Int, Sendable, Codable {
        case normal = 0, short = 1, long = 2
    }

    public enum Flicker: Sendable, Equatable {
        case off, auto
        /// 10_000 µs for 50 Hz mains, 8_333 µs for 60 Hz.
        case period(microseconds: Int)
    }

    public enum WhiteBalance: Sendable, Equatable {
        case auto, incandescent, tungsten, fluorescent, indoor, daylight, cloudy
        case manual(red: Double, blue: Double)
    }

    public var exposure: Exposure = .auto
    /// EV compensation in stops.
    public var exposureValue: Double = 0
    public var metering: Metering = .centreWeighted
    public var exposureProfile: ExposureProfile = .normal
    /// nil leaves the camera's own default.
    public var flicker: Flicker?
    public var whiteBalance: WhiteBalance = .auto

    public init() {}

    /// The libcamera controls, in the order they must be set. `hasModeControls`
    /// is true where the camera has ExposureTimeMode/AnalogueGainMode
    /// (libcamera >= 0.5): there manual values are ignored unless the mode is
    /// Manual first, and AeEnable is only a legacy wrapper.
    public func libcameraControls(hasModeControls: Bool) -> [ControlSetting] {
        var out: [ControlSetting] = []
        switch exposure {
        case .auto:
            if hasModeControls {
                out.append(.init("ExposureTimeMode", 0))
                out.append(.init("AnalogueGainMode", 0))
            } else {
                out.append(.init("AeEnable", 1))
            }
        case .manual(let shutter, let gain):
            if hasModeControls {
                out.append(.init("ExposureTimeMode", shutter == nil ? 0 : 1))
                if let shutter { out.append(.init("ExposureTime", Double(shutter))) }
                out.append(.init("AnalogueGainMode", gain == nil ? 0 : 1))
                if let gain { out.append(.init("AnalogueGain", gain)) }
            } else {
                // Before 0.5 a fixed ExposureTime/AnalogueGain pins that half;
                // AeEnable off only when both are fixed.
                out.append(.init("AeEnable", (shutter != nil && gain != nil) ? 0 : 1))
                if let shutter { out.append(.init("ExposureTime", Double(shutter))) }
                if let gain { out.append(.init("AnalogueGain", gain)) }
            }
        }
        out.append(.init("ExposureValue", exposureValue))
        out.append(.init("AeMeteringMode", Double(metering.rawValue)))
        out.append(.init("AeExposureMode", Double(exposureProfile.rawValue)))
        switch flicker {
        case nil: break
        case .off: out.append(.init("AeFlickerMode", 0))
        case .auto: out.append(.init("AeFlickerMode", 2))
        case .period(let us):
            out.append(.init("AeFlickerMode", 1))
            out.append(.init("AeFlickerPeriod", Double(us)))
        }
        switch whiteBalance {
        case .manual(let red, let blue):
            out.append(.init("AwbEnable", 0))
            out.append(ControlSetting(name: "ColourGains", values: [red, blue]))
        default:
            out.append(.init("AwbEnable", 1))
            out.append(.init("AwbMode", Double(awbModeValue)))
        }
        return out
    }

    /// libcamera's AwbModeEnum.
    var awbModeValue: Int {
        switch whiteBalance {
        case .auto, .manual: return 0
        case .incandescent: return 1
        case .tungsten: return 2
        case .fluorescent: return 3
        case .indoor: return 4
        case .daylight: return 5
        case .cloudy: return 6
        }
    }
}

/// One libcamera control by name, with its value(s) as numbers; the shim
/// converts them to the control's own type.
public struct ControlSetting: Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var values: [Double]

    public init(name: String, values: [Double]) {
        self.name = name
        self.values = values
    }

    init(_ name: String, _ value: Double) {
        self.init(name: name, values: [value])
    }

    public var description: String { "\(name)=\(values.map { "\($0)" }.joined(separator: ","))" }
}
