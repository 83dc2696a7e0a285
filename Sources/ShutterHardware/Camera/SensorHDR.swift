// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import CShutterSys
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore

/// Camera Module 3's sensor HDR, as rpicam-apps' `--hdr sensor` does it
/// (core/options.cpp): the sensor subdevice's V4L2 control
/// `V4L2_CID_WIDE_DYNAMIC_RANGE`, set before libcamera opens the camera, and
/// libcamera's CameraManager started again when it changed (it reads the
/// sensor's modes when it starts; imx708 has one HDR mode, 2304x1296).
public enum SensorHDR {
    /// Sets the sensor HDR of the camera `selector` picks to `on`, before it is
    /// opened: off clears it (a sensor with no such control needs nothing).
    /// No camera matching: `.off` (the open that follows says what is missing).
    public static func prepare(on: Bool, selector: CameraSelector) throws -> SensorHDRState {
        let id: String
        do {
            // Released before returning: the manager started next reads the modes anew.
            let manager = try LibcameraCameraManager()
            let found = try manager.cameras()
            guard let i = selector.select(from: found) else { return .off }
            id = found[i].id
        }
        return set(on: on, cameraID: id)
    }

    /// Finds the sensor subdevice of camera `cameraID` and sets its control.
    static func set(on: Bool, cameraID: String, sysfs: String = "/sys/class/video4linux",
                    dev: String = "/dev") -> SensorHDRState {
        guard let sensor = SensorSubdevice.find(cameraID: cameraID, sysfs: sysfs, dev: dev) else {
            return on ? .lacking("no V4L2 sensor subdevice of camera \(cameraID) found in \(sysfs) (sensor HDR is "
                                 + "a control of the sensor's /dev/v4l-subdev node)") : .off
        }
        let r = shutter_v4l2_set_control(sensor.node, shutter_v4l2_cid_wide_dynamic_range(), on ? 1 : 0)
        switch r {
        case 0, 1:
            return on ? .on(node: sensor.node) : .off
        case -EINVAL:
            return on ? .lacking("the sensor \(sensor.name) (\(sensor.node)) has no HDR mode (no "
                                 + "wide_dynamic_range control); use \"single-exp\" where the camera has it") : .off
        default:
            let why = String(cString: strerror(-r))
            return on ? .lacking("cannot set the HDR control of the sensor \(sensor.name) on \(sensor.node): \(why)"
                                 + (r == -EACCES ? " (run the service as a member of the 'video' group)" : ""))
                : .off
        }
    }
}

/// A camera's sensor among the V4L2 subdevices, found as rpicam-apps finds it:
/// the subdevice whose device-tree node is the camera's id (a Pi: the id is
/// the sensor's device-tree path, e.g. "/base/axi/.../imx708@1a"), or, where
/// there is no device tree (vimc: "platform/vimc.0 Sensor B"), whose entity
/// name ends the id.
public struct SensorSubdevice: Sendable, Equatable {
    /// "/dev/v4l-subdev2".
    public var node: String
    /// The subdevice's name ("imx708", "Sensor B").
    public var name: String

    public static func find(cameraID: String, sysfs: String = "/sys/class/video4linux",
                            dev: String = "/dev") -> SensorSubdevice? {
        let fm = FileManager.default
        let entries = ((try? fm.contentsOfDirectory(atPath: sysfs)) ?? []).filter { $0.hasPrefix("v4l-subdev") }
            .sorted { $0.count != $1.count ? $0.count < $1.count : $0 < $1 }
        for entry in entries {
            let dir = sysfs + "/" + entry
            let name = ((try? String(contentsOfFile: dir + "/name", encoding: .utf8)) ?? "")
                .trimmedWhitespace
            let ofNode = try? fm.destinationOfSymbolicLink(atPath: dir + "/device/of_node")
            let byTree = ofNode.map { !cameraID.isEmpty && $0.hasSuffix(cameraID) } ?? false
            let byName = !name.isEmpty && cameraID.hasSuffix(" " + name)
            if byTree || byName { return SensorSubdevice(node: dev + "/" + entry, name: name.isEmpty ? entry : name) }
        }
        return nil
    }
}
