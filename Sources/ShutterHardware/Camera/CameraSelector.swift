// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

/// Where a camera sits, from libcamera's `properties::Location`.
public enum CameraLocation: String, Sendable, Codable, CaseIterable {
    case front, back, external, unknown

    init(shimValue: Int32) {
        switch shimValue {
        case 0: self = .front
        case 1: self = .back
        case 2: self = .external
        default: self = .unknown
        }
    }
}

/// One camera as libcamera enumerates it.
public struct LibcameraCameraDescription: Sendable, Equatable {
    /// libcamera's id: the device-tree path on a Pi (`/base/axi/pcie@120000/rp1/i2c@88000/imx708@1a`),
    /// the USB path for a webcam, the media device for vimc.
    public var id: String
    /// Sensor model from `properties::Model` (`imx708`, `imx219`, `ov5647`, ...), "" when absent.
    public var model: String
    public var location: CameraLocation
    /// Mounting rotation in degrees from `properties::Rotation`.
    public var rotation: Int?
    public var pixelArraySize: CameraSize?
    public var hasAutofocus: Bool
    /// Lens position range and the tuning's default (hyperfocal on Pi modules), dioptres.
    public var lensPositionRange: ClosedRange<Double>?
    public var defaultLensPosition: Double?

    public init(id: String, model: String, location: CameraLocation, rotation: Int? = nil,
                pixelArraySize: CameraSize? = nil, hasAutofocus: Bool = false,
                lensPositionRange: ClosedRange<Double>? = nil, defaultLensPosition: Double? = nil) {
        self.id = id
        self.model = model
        self.location = location
        self.rotation = rotation
        self.pixelArraySize = pixelArraySize
        self.hasAutofocus = hasAutofocus
        self.lensPositionRange = lensPositionRange
        self.defaultLensPosition = defaultLensPosition
    }

    /// "imx708 (back) /base/.../imx708@1a" for messages.
    public var summary: String {
        let name = model.isEmpty ? "unnamed sensor" : model
        return location == .unknown ? "\(name) \(id)" : "\(name) (\(location.rawValue)) \(id)"
    }
}

/// Which camera to use. Config and command line spell it as text, see `init(parsing:)`.
public enum CameraSelector: Sendable, Equatable, CustomStringConvertible {
    /// The first camera libcamera lists.
    case first
    /// By position in libcamera's list.
    case index(Int)
    /// By sensor model, case-insensitive prefix (`imx708` matches `imx708_wide`).
    case model(String)
    /// By location property (front/back/external).
    case location(CameraLocation)
    /// By a fragment of libcamera's id, e.g. `i2c@88000` for the Pi 5's CAM0 port.
    case idContaining(String)

    /// "" or "auto" = first; "0", "1" = index; "front"/"back"/"external" = location;
    /// "id:<fragment>" = id; anything else = model.
    public init(parsing text: String) {
        let t = text.trimmedSpaces
        let lower = t.lowercased()
        if lower.isEmpty || lower == "auto" || lower == "first" {
            self = .first
        } else if let n = Int(lower), n >= 0 {
            self = .index(n)
        } else if let loc = CameraLocation(rawValue: lower), loc != .unknown {
            self = .location(loc)
        } else if lower.hasPrefix("id:") {
            self = .idContaining(String(t.dropFirst(3)))
        } else {
            self = .model(t)
        }
    }

    public var description: String {
        switch self {
        case .first: return "the first camera"
        case .index(let i): return "camera #\(i)"
        case .model(let m): return "model \"\(m)\""
        case .location(let l): return "the \(l.rawValue) camera"
        case .idContaining(let s): return "id containing \"\(s)\""
        }
    }

    /// The index in `cameras` this selector picks, or nil.
    public func select(from cameras: [LibcameraCameraDescription]) -> Int? {
        switch self {
        case .first:
            return cameras.isEmpty ? nil : 0
        case .index(let i):
            return cameras.indices.contains(i) ? i : nil
        case .model(let m):
            return CameraListing.firstIndex(ofModel: m, in: cameras.map(\.model))
        case .location(let l):
            return cameras.firstIndex { $0.location == l }
        case .idContaining(let s):
            return cameras.firstIndex { $0.id.contains(s) }
        }
    }
}
