// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import CLibcameraShim
import ShutterCore

/// The process's libcamera CameraManager (one per process, shared and reference
/// counted in the shim). Creating it enumerates devices and may take tens of
/// milliseconds: do it once at startup, not per frame.
public final class LibcameraCameraManager: Sendable {
    private let handle: ShimManagerHandle

    /// Version of the libcamera headers the shim was built against.
    public static var headerVersion: String { String(cString: shc_libcamera_header_version()) }

    public init() throws {
        var raw: OpaquePointer?
        let r = shc_manager_acquire(&raw)
        guard r == 0, let raw else {
            var err = CameraError.fromShim(r == 0 ? -EIO : r, "CameraManager.start")
            err.code = .noDevice
            err.message += ". libcamera could not start: check that libcamera is installed (libcamera0.x, libcamera-ipa) and /dev/media* is readable"
            throw err
        }
        handle = ShimManagerHandle(pointer: raw)
    }

    deinit { shc_manager_release(handle.pointer) }

    /// Version of the running libcamera library, e.g. "v0.0.3" or "v0.4.0+53-...".
    public var libraryVersion: String { String(cString: shc_manager_library_version(handle.pointer)) }

    /// The cameras present now (may change: USB and hotplug).
    public func cameras() throws -> [LibcameraCameraDescription] {
        var capacity = 8
        while true {
            var infos = [shc_camera_info](repeating: shc_camera_info(), count: capacity)
            let n = shc_manager_cameras(handle.pointer, &infos, infos.count)
            if n < 0 { throw CameraError.fromShim(n, "CameraManager.cameras") }
            if Int(n) > capacity {
                capacity = Int(n)
                continue
            }
            return infos.prefix(Int(n)).map(Self.describe)
        }
    }

    /// Opens the selected camera; `CameraError.noDevice` (naming what was found
    /// and what to check) when nothing matches.
    public func open(_ selector: CameraSelector = .first,
                     settings: LibcameraCameraSettings = LibcameraCameraSettings()) throws -> LibcameraCamera {
        let found = try cameras()
        guard let index = selector.select(from: found) else {
            throw CameraError.noDevice(selector: selector, found: found, libcameraVersion: libraryVersion)
        }
        let description = found[index]
        var raw: OpaquePointer?
        let r = shc_camera_open(handle.pointer, description.id, &raw)
        guard r == 0, let raw else {
            if r == -ENODEV {
                throw CameraError.noDevice(selector: selector, found: try cameras(),
                                           libcameraVersion: libraryVersion)
            }
            throw CameraError.fromShim(r == 0 ? -EIO : r, "Camera.acquire(\(description.model))")
        }
        return LibcameraCamera(handle: ShimCameraHandle(pointer: raw), description: description,
                               settings: settings, manager: self)
    }

    static func describe(_ info: shc_camera_info) -> LibcameraCameraDescription {
        let size = info.pixel_array_width > 0 && info.pixel_array_height > 0
            ? CameraSize(width: Int(info.pixel_array_width), height: Int(info.pixel_array_height)) : nil
        var range: ClosedRange<Double>?
        if info.has_lens_position != 0, !info.lens_position_min.isNaN, !info.lens_position_max.isNaN,
           info.lens_position_min <= info.lens_position_max {
            range = Double(info.lens_position_min)...Double(info.lens_position_max)
        }
        let def = info.has_lens_position != 0 && !info.lens_position_default.isNaN
            ? Double(info.lens_position_default) : nil
        return LibcameraCameraDescription(
            id: String(cTuple: info.id), model: String(cTuple: info.model),
            location: CameraLocation(shimValue: info.location),
            rotation: info.rotation >= 0 ? Int(info.rotation) : nil,
            pixelArraySize: size, hasAutofocus: info.has_autofocus != 0,
            lensPositionRange: range, defaultLensPosition: def)
    }
}

/// The cameras libcamera sees now (starts and stops a manager if none is alive).
public func enumerateLibcameraCameras() throws -> [LibcameraCameraDescription] {
    try LibcameraCameraManager().cameras()
}
