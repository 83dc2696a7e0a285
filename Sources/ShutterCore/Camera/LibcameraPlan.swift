// SPDX-License-Identifier: BSD-2-Clause
/// The libcamera side of `CameraControls`: the plan of libcamera controls for
/// one start, read from each control's `libcamera` mapping in
/// `CameraControls.table` (names and enum numbers as rpicam-apps sets them,
/// core/options.cpp tables and RPiCamApp::StartCamera; by name, so one build
/// works across libcamera releases). Values only: ShutterHardware sets the
/// plan through the shim.

/// Which configuration a camera start is for.
public enum CameraStreamRole: Sendable, Equatable {
    case video, still
}

/// Whether the sensor's own HDR mode is on for a camera, as its opener set it.
public enum SensorHDRState: Sendable, Equatable {
    /// Not asked for (and switched off where the sensor has it).
    case off
    /// On: the sensor subdevice's wide-dynamic-range control was set to 1.
    case on(node: String)
    /// Asked for, and this camera cannot: why (`camera.hdr` is reported lacking).
    case lacking(String)
}

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

    /// Every name the mapping may ask about, from the table.
    public static let knownNames: [String] = CameraControls.table.flatMap(\.libcameraNames)
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

    /// x, y, width, height: a Rectangle control's value.
    public var values: [Double] { [Double(x), Double(y), Double(width), Double(height)] }

    public var description: String { "(\(x),\(y))/\(width)x\(height)" }
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

    public var description: String { "\(name)=\(values.map { "\($0)" }.joined(separator: ","))" }
}

/// The libcamera controls for one start, in the order they must be set, and
/// the asked-for controls the camera lacks, each with its reason.
public struct LibcameraControlPlan: Sendable, Equatable {
    public var settings: [ControlSetting] = []
    public var lacking: [LackingControl] = []
}

/// One control's turn in `CameraControls.libcameraPlan`: what its rule reads
/// (the controls, the camera, the role) and what it adds to the plan.
public struct LibcameraPlanning {
    public let controls: CameraControls
    public let camera: LibcameraControlSupport
    public let role: CameraStreamRole
    /// The control whose turn it is.
    public fileprivate(set) var control: CameraControl
    fileprivate let requested: Set<CameraControlID>
    public fileprivate(set) var plan = LibcameraControlPlan()

    /// Whether the camera has the libcamera control `name`.
    public func has(_ name: String) -> Bool { camera.names.contains(name) }

    /// Sets the libcamera control `name` to `values`.
    public mutating func add(_ name: String, _ values: [Double]) {
        plan.settings.append(ControlSetting(name: name, values: values))
    }

    /// This control is lacking, if it was asked for: with `reason`, else the table's; once.
    public mutating func lack(_ reason: String? = nil) {
        guard requested.contains(control.id), !plan.lacking.contains(where: { $0.control == control.id.rawValue }) else { return }
        plan.lacking.append(LackingControl(control.id, reason: reason))
    }

    /// The libcamera control of this control's own name, one number: set where
    /// the camera has it, else lacking (if asked for).
    public mutating func set(_ value: Double) {
        if has(control.id.rawValue) { add(control.id.rawValue, [value]) } else { lack() }
    }
}

extension CameraControls {
    /// The plan for a start of `role` on `camera`, control by control in the
    /// table's order. A control at its default is set where the camera has it
    /// (so a runtime change can be undone) and left out where it does not; one
    /// asked for (`requestedControls`) that the camera lacks is reported, never
    /// dropped silently.
    public func libcameraPlan(for camera: LibcameraControlSupport, role: CameraStreamRole) -> LibcameraControlPlan {
        var p = LibcameraPlanning(controls: self, camera: camera, role: role, control: Self.table[0],
                                  requested: Set(requestedControls))
        for control in Self.table {
            p.control = control
            switch control.libcamera {
            case .number(let value): p.set(value(self, role))
            case .noControl: p.lack()
            case .rule(_, let rule): rule(&p)
            }
        }
        return p.plan
    }

    /// The ScalerCrop for `zoom` and `roi`: the region of interest (else the
    /// whole crop area), then its centred 1/zoom. Nil when neither is asked
    /// (the pipeline's own crop stays) or the crop area is unknown.
    public func scalerCrop(in maximum: PixelRect?) -> PixelRect? {
        guard zoom > 1 || roi != nil, let maximum else { return nil }
        return maximum.part((NormalisedRect(roi) ?? .full).zoomed(zoom))
    }
}
