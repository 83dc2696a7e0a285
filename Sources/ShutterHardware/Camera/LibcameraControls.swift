// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// What the control mapping needs to know of one camera, read after a
/// configure (the crop limits depend on the sensor mode).
public struct LibcameraControlSupport: Sendable, Equatable {
    /// libcamera control names the camera has ("AfMode", "ScalerCrop", ...).
    public var names: Set<String>
    /// The largest ScalerCrop of the configured mode (the ScalerCrop control's
    /// maximum, else ScalerCropMaximum), in sensor pixels: what zoom, the
    /// region of interest and the autofocus window are fractions of.
    public var cropMaximum: PixelRect?
    /// The largest value of AeFlickerMode: 1 where there is no automatic
    /// flicker detection (the Raspberry Pi's), nil when unknown.
    public var flickerModeMaximum: Double?
    /// The lens position the tuning calls default (hyperfocal on a Pi module).
    public var defaultLensPosition: Double?
    /// The sensor's HDR mode, set before the camera was opened.
    public var sensorHDR: SensorHDRState

    public init(names: Set<String>, cropMaximum: PixelRect? = nil, flickerModeMaximum: Double? = nil,
                defaultLensPosition: Double? = nil, sensorHDR: SensorHDRState = .off) {
        self.names = names
        self.cropMaximum = cropMaximum
        self.flickerModeMaximum = flickerModeMaximum
        self.defaultLensPosition = defaultLensPosition
        self.sensorHDR = sensorHDR
    }

    /// Every name the mapping may ask about.
    public static let knownNames: [String] = [
        "AeEnable", "ExposureTimeMode", "AnalogueGainMode", "ExposureTime", "AnalogueGain", "ExposureValue",
        "AeMeteringMode", "AeExposureMode", "AeFlickerMode", "AeFlickerPeriod", "AwbEnable", "AwbMode", "ColourGains",
        "AfMode", "AfRange", "AfSpeed", "AfMetering", "AfWindows", "LensPosition", "Brightness", "Contrast",
        "Saturation", "Sharpness", "NoiseReductionMode", "ScalerCrop", "HdrMode",
    ]
}

/// A rectangle in sensor pixels (libcamera's Rectangle).
public struct PixelRect: Sendable, Equatable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// `r` (fractions of this rectangle) in pixels, as rpicam-apps maps `--roi`
    /// and `--autofocus-window`: scaled, then moved by this rectangle's origin.
    public func part(_ r: NormalisedRect) -> PixelRect {
        let w = min(width, max(1, Int((r.width * Double(width)).rounded())))
        let h = min(height, max(1, Int((r.height * Double(height)).rounded())))
        let px = min(width - w, max(0, Int((r.x * Double(width)).rounded())))
        let py = min(height - h, max(0, Int((r.y * Double(height)).rounded())))
        return PixelRect(x: x + px, y: y + py, width: w, height: h)
    }

    var values: [Double] { [Double(x), Double(y), Double(width), Double(height)] }

    public var description: String { "(\(x),\(y))/\(width)x\(height)" }
}

/// The libcamera controls for one start, in the order they must be set, and
/// the asked-for controls the camera lacks, each with its reason.
public struct LibcameraControlPlan: Sendable, Equatable {
    public var settings: [ControlSetting] = []
    public var lacking: [LackingControl] = []
}

/// The libcamera side of `CameraControls`: control names and enum numbers as
/// rpicam-apps sets them (core/options.cpp tables, RPiCamApp::StartCamera),
/// by name so one build works across libcamera releases.
extension CameraControls {
    /// The plan for a start of `role` on `camera`. A control at its default is
    /// set where the camera has it (so a runtime change can be undone) and left
    /// out where it does not; one asked for (`requestedControls`) that the
    /// camera lacks is reported, never dropped silently.
    public func libcameraPlan(for camera: LibcameraControlSupport, role: CameraStreamRole) -> LibcameraControlPlan {
        var plan = LibcameraControlPlan()
        let requested = Set(requestedControls)
        func has(_ name: String) -> Bool { camera.names.contains(name) }
        func add(_ name: String, _ values: [Double]) { plan.settings.append(ControlSetting(name: name, values: values)) }
        func lack(_ id: CameraControlID, _ reason: String? = nil) {
            guard requested.contains(id), !plan.lacking.contains(where: { $0.control == id.rawValue }) else { return }
            plan.lacking.append(LackingControl(id, reason: reason))
        }
        /// A one-value control: set where present, else reported if asked.
        func set(_ id: CameraControlID, _ value: Double) {
            if has(id.rawValue) { add(id.rawValue, [value]) } else { lack(id) }
        }

        addExposure(camera, add: add, lack: lack)
        set(.exposureValue, exposure.ev)
        set(.aeMeteringMode, Double(Self.meteringValue(exposure.metering)))
        // No libcamera control places the exposure metering (core and the Pi's
        // vendor controls alike): a window asked for is reported, never dropped.
        lack(.aeMeteringWindow)
        set(.aeExposureMode, Double(Self.exposureModeValue(exposure.mode)))
        switch exposure.flicker {
        case .off:
            set(.aeFlickerMode, 0)  // FlickerOff
        case .hz50, .hz60:
            if has("AeFlickerMode") && has("AeFlickerPeriod"), let us = exposure.flicker.periodMicroseconds {
                add("AeFlickerMode", [1])  // FlickerManual
                add("AeFlickerPeriod", [Double(us)])
            } else {
                lack(.aeFlickerMode)
            }
        case .auto:
            if let top = camera.flickerModeMaximum, top < 2 {
                lack(.aeFlickerMode, "this camera has no automatic flicker detection; use \"50hz\" or \"60hz\"")
            } else {
                set(.aeFlickerMode, 2)  // FlickerAuto
            }
        }

        set(.awbMode, Double(Self.awbModeValue(whiteBalance.mode)))
        if let g = whiteBalance.gains, g.count == 2 {
            if has("ColourGains") {
                if has("AwbEnable") { add("AwbEnable", [0]) }
                add("ColourGains", g)
            } else {
                lack(.colourGains)
            }
        } else if has("AwbEnable") {
            add("AwbEnable", [1])
        }

        addFocus(camera, role: role, add: add, lack: lack)

        set(.brightness, image.brightness)
        set(.contrast, image.contrast)
        set(.saturation, image.saturation)
        set(.sharpness, image.sharpness)
        set(.noiseReductionMode, Double(Self.noiseReductionValue(image.denoise, role: role)))

        if let crop = scalerCrop(in: camera.cropMaximum), has("ScalerCrop") {
            add("ScalerCrop", crop.values)
        } else if zoom > 1 || roi != nil {
            lack(.scalerCrop)
        }

        switch hdr {
        case .off:
            if has("HdrMode") { add("HdrMode", [0]) }  // HdrModeOff
        case .auto, .singleExp:
            set(.hdrMode, 3)  // HdrModeSingleExposure, as rpicam-apps sets for both
        case .sensor:
            switch camera.sensorHDR {
            case .on:
                if has("HdrMode") { add("HdrMode", [0]) }  // the sensor does it, not the ISP
            case .lacking(let why):
                lack(.hdrMode, why)
            case .off:
                lack(.hdrMode, "the camera was opened without sensor HDR, which is switched before the open; "
                     + "`shutterctl set camera.hdr sensor` restarts the camera for it")
            }
        }
        return plan
    }

    /// Shutter and gain. From libcamera 0.5 (ExposureTimeMode/AnalogueGainMode)
    /// a manual value is ignored unless its mode is Manual first, and AeEnable
    /// is gone; before it a fixed ExposureTime/AnalogueGain pins that half of
    /// AE, and AeEnable goes off only when both are fixed.
    private func addExposure(_ camera: LibcameraControlSupport, add: (String, [Double]) -> Void,
                             lack: (CameraControlID, String?) -> Void) {
        let has = { camera.names.contains($0) }
        let shutter = exposure.fixedShutterMicroseconds.flatMap { has("ExposureTime") ? Double($0) : nil }
        let gain = exposure.fixedGain.flatMap { has("AnalogueGain") ? $0 : nil }
        if exposure.fixedShutterMicroseconds != nil && shutter == nil { lack(.exposureTime, nil) }
        if exposure.fixedGain != nil && gain == nil { lack(.analogueGain, nil) }
        if has("ExposureTimeMode") || has("AnalogueGainMode") {
            if has("ExposureTimeMode") { add("ExposureTimeMode", [shutter == nil ? 0 : 1]) }
            if let shutter { add("ExposureTime", [shutter]) }
            if has("AnalogueGainMode") { add("AnalogueGainMode", [gain == nil ? 0 : 1]) }
            if let gain { add("AnalogueGain", [gain]) }
        } else {
            if has("AeEnable") { add("AeEnable", [shutter != nil && gain != nil ? 0 : 1]) }
            if let shutter { add("ExposureTime", [shutter]) }
            if let gain { add("AnalogueGain", [gain]) }
        }
    }

    /// AfMode, AfRange, AfSpeed where the camera has autofocus; the window
    /// (AfWindows, in ScalerCrop pixels); and in manual focus the lens position
    /// (the configured one, else the tuning's default, as rpicam-apps does).
    /// A still keeps the lens where the press's autofocus cycle put it: its
    /// start sets AfMode only in manual focus.
    private func addFocus(_ camera: LibcameraControlSupport, role: CameraStreamRole,
                          add: (String, [Double]) -> Void, lack: (CameraControlID, String?) -> Void) {
        let has = { camera.names.contains($0) }
        let mode = focus.effectiveMode
        if !has("AfMode") {
            lack(.afMode, nil)
        } else if role == .video || mode == .manual {
            add("AfMode", [Double(Self.afModeValue(mode))])
        }
        if has("AfRange") { add("AfRange", [Double(Self.afRangeValue(focus.range))]) } else { lack(.afRange, nil) }
        if has("AfSpeed") { add("AfSpeed", [focus.speed == .fast ? 1 : 0]) } else { lack(.afSpeed, nil) }
        if has("AfWindows") && has("AfMetering") {
            // Empty: AfMetering back to Auto (the camera's own choice of where to look).
            if let window = NormalisedRect(focus.window), let crop = camera.cropMaximum {
                add("AfWindows", crop.part(window).values)
            } else if focus.window == nil {
                add("AfWindows", [])
            } else {
                lack(.afWindows, "the camera reports no crop area to place the window in")
            }
        } else {
            lack(.afWindows, nil)
        }
        if mode == .manual {
            if has("LensPosition") {
                if let p = focus.lensPosition ?? camera.defaultLensPosition { add("LensPosition", [p]) }
            } else {
                lack(.lensPosition, nil)
            }
        }
    }

    /// The ScalerCrop for `zoom` and `roi`: the region of interest (else the
    /// whole crop area), then its centred 1/zoom. Nil when neither is asked
    /// (the pipeline's own crop stays) or the crop area is unknown.
    public func scalerCrop(in maximum: PixelRect?) -> PixelRect? {
        guard zoom > 1 || roi != nil, let maximum else { return nil }
        return maximum.part((NormalisedRect(roi) ?? .full).zoomed(zoom))
    }

    /// Which control of the vocabulary a libcamera control serves (the mode
    /// and enable controls belong to the value they switch).
    static func controlID(forLibcameraName name: String) -> CameraControlID? {
        switch name {
        case "AeEnable", "ExposureTimeMode": return .exposureTime
        case "AnalogueGainMode": return .analogueGain
        case "AeFlickerPeriod": return .aeFlickerMode
        case "AwbEnable": return .colourGains
        case "AfMetering": return .afWindows
        default: return CameraControlID(rawValue: name)
        }
    }

    // libcamera's enum values (control_ids.yaml), which rpicam-apps' option tables use.

    static func meteringValue(_ m: Exposure.Metering) -> Int {
        switch m {
        case .centre: return 0   // MeteringCentreWeighted
        case .spot: return 1     // MeteringSpot
        case .average: return 2  // MeteringMatrix
        }
    }

    static func exposureModeValue(_ m: Exposure.Mode) -> Int {
        switch m {
        case .normal: return 0  // ExposureNormal
        case .short: return 1   // ExposureShort
        case .long: return 2    // ExposureLong
        }
    }

    static func awbModeValue(_ m: WhiteBalance.Mode) -> Int {
        switch m {
        case .auto: return 0
        case .incandescent: return 1
        case .tungsten: return 2
        case .fluorescent: return 3
        case .indoor: return 4
        case .daylight: return 5
        case .cloudy: return 6
        }
    }

    static func afModeValue(_ m: Focus.Mode) -> Int {
        switch m {
        case .manual: return 0
        case .auto: return 1
        case .continuous: return 2
        }
    }

    static func afRangeValue(_ r: Focus.Range) -> Int {
        switch r {
        case .normal: return 0
        case .macro: return 1
        case .full: return 2
        }
    }

    /// draft::NoiseReductionMode. `auto` is what rpicam-vid and rpicam-still
    /// pick: Fast for video, HighQuality for a still.
    static func noiseReductionValue(_ d: Image.Denoise, role: CameraStreamRole) -> Int {
        switch d {
        case .auto: return role == .still ? 2 : 1
        case .off: return 0      // NoiseReductionModeOff
        case .cdnOff: return 3   // NoiseReductionModeMinimal
        case .cdnFast: return 1  // NoiseReductionModeFast
        case .cdnHQ: return 2    // NoiseReductionModeHighQuality
        }
    }
}

/// One libcamera control by name, with its value(s) as numbers; the shim
/// converts them to the control's own type (a Rectangle from 4 numbers).
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
