// SPDX-License-Identifier: BSD-2-Clause
/// What the photographer asks of the sensor: exposure, white balance, focus,
/// image tuning, digital zoom and HDR. One vocabulary for the configuration
/// (these types are the `camera.*` sections, key for key), the real camera and
/// the simulated one. The words are rpicam-apps' (`--metering centre`,
/// `--awb daylight`, `--denoise cdn_hq`). A value left at its default here asks
/// for nothing: the camera's own automatic behaviour. These are the values;
/// each control is declared once, with its keys, when it is asked for, what a
/// camera lacking it is told and how it becomes libcamera controls, in
/// `CameraControls.table` (CameraControlTable.swift).
public struct CameraControls: Equatable, Sendable {
    public var exposure = Exposure()
    public var whiteBalance = WhiteBalance()
    public var focus = Focus()
    public var image = Image()
    /// Digital zoom: a centred crop of 1/zoom of the frame (of `roi` when set). 1...8.
    public var zoom = 1.0
    /// Region of interest, [x, y, width, height] normalised to the full frame; null = all of it.
    public var roi: [Double]?
    public var hdr = HDR.off

    public init() {}

    public struct Exposure: Equatable, Sendable {
        public enum Metering: String, Codable, Sendable, CaseIterable {
            case centre, spot, average
        }

        /// Which way auto exposure trades shutter for gain.
        public enum Mode: String, Codable, Sendable, CaseIterable {
            case normal, short, long
        }

        public enum Flicker: String, Codable, Sendable, CaseIterable {
            case off
            case hz50 = "50hz"
            case hz60 = "60hz"
            case auto

            /// The mains flicker period a manual setting cancels.
            public var periodMicroseconds: Int? {
                switch self {
                case .hz50: return 10_000
                case .hz60: return 8_333
                case .off, .auto: return nil
                }
            }
        }

        /// Fixed shutter time in µs; 0 = automatic.
        public var shutterUs = 0
        /// Fixed analogue gain (≥ 1); 0 = automatic.
        public var gain = 0.0
        /// Exposure compensation in stops.
        public var ev = 0.0
        public var metering = Metering.centre
        public var mode = Mode.normal
        public var flicker = Flicker.off
        /// Where auto exposure meters, [x, y, width, height] normalised (the
        /// point of interest of `shutterctl focus`); null = the whole frame.
        /// `metering` weighs inside it. libcamera has no control for it.
        public var window: [Double]?

        public init() {}

        /// The fixed shutter, nil when automatic.
        public var fixedShutterMicroseconds: Int? { shutterUs > 0 ? shutterUs : nil }
        /// The fixed gain, nil when automatic.
        public var fixedGain: Double? { gain > 0 ? gain : nil }
    }

    public struct WhiteBalance: Equatable, Sendable {
        public enum Mode: String, Codable, Sendable, CaseIterable {
            case auto, incandescent, tungsten, fluorescent, indoor, daylight, cloudy
        }

        public var mode = Mode.auto
        /// Fixed [red, blue] colour gains: automatic white balance off. Null = automatic.
        public var gains: [Double]?

        public init() {}
    }

    public struct Focus: Equatable, Sendable {
        public enum Mode: String, Codable, Sendable, CaseIterable {
            /// The lens stays at `lensPosition` (or the camera's default, hyperfocal).
            case manual
            /// Focus only when asked: the press's autofocus cycle.
            case auto
            /// The lens follows the scene all the time (where the camera has autofocus).
            case continuous
        }

        public enum Range: String, Codable, Sendable, CaseIterable {
            case normal, macro, full
        }

        public enum Speed: String, Codable, Sendable, CaseIterable {
            case normal, fast
        }

        public var mode = Mode.continuous
        public var range = Range.normal
        public var speed = Speed.normal
        /// Where autofocus looks, [x, y, width, height] normalised; null = the camera's choice.
        public var window: [Double]?
        /// Lens position in dioptres (1 / metres, 0 = infinity); null = not fixed.
        /// Setting one means manual focus, as rpicam-apps' `--lens-position` does.
        public var lensPosition: Double?

        public init() {}

        /// The mode in effect: a lens position fixes the focus whatever `mode` says.
        public var effectiveMode: Mode { lensPosition == nil ? mode : .manual }
    }

    /// Image tuning, in libcamera's units (rpicam-apps' defaults).
    public struct Image: Equatable, Sendable {
        public enum Denoise: String, Codable, Sendable, CaseIterable {
            /// What rpicam-apps picks per use: fast for video, high quality for stills.
            case auto
            case off
            case cdnOff = "cdn_off"
            case cdnFast = "cdn_fast"
            case cdnHQ = "cdn_hq"
        }

        /// −1...1, 0 = unchanged.
        public var brightness = 0.0
        /// 0...32, 1 = normal.
        public var contrast = 1.0
        /// 0...32, 1 = normal, 0 = greyscale.
        public var saturation = 1.0
        /// 0...16, 1 = normal.
        public var sharpness = 1.0
        public var denoise = Denoise.auto

        public init() {}
    }

    public enum HDR: String, Codable, Sendable, CaseIterable {
        case off
        /// Single-exposure HDR, as `single-exp` (rpicam-apps' `auto` picks the
        /// sensor's HDR on imx708; here `sensor` asks for that explicitly, as it
        /// restarts the camera).
        case auto
        /// The sensor's own HDR mode (Camera Module 3), switched before the camera
        /// opens (`CameraOpening`, ShutterHardware's `SensorHDR`).
        case sensor
        /// The ISP's multi-frame HDR from single exposures (Pi 5).
        case singleExp = "single-exp"
    }
}

/// A rectangle in 0...1 coordinates of the full frame: the focus window, the
/// region of interest.
public struct NormalisedRect: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// From a configuration value [x, y, width, height]; nil for anything else.
    public init?(_ values: [Double]?) {
        guard let v = values, v.count == 4 else { return nil }
        self.init(x: v[0], y: v[1], width: v[2], height: v[3])
    }

    public static let full = NormalisedRect(x: 0, y: 0, width: 1, height: 1)

    /// The centred part of this rectangle 1/`zoom` its size (zoom < 1 counts as 1).
    public func zoomed(_ zoom: Double) -> NormalisedRect {
        let z = max(1, zoom)
        let w = width / z, h = height / z
        return NormalisedRect(x: x + (width - w) / 2, y: y + (height - h) / 2, width: w, height: h)
    }
}
