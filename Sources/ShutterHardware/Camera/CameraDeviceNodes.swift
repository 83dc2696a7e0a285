// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The V4L2/media device nodes a camera needs, and whether this process may
/// open them: the facts a "no camera" message should name.
public struct CameraDeviceNode: Sendable, Equatable {
    public var path: String
    public var accessible: Bool
}

public enum CameraDeviceNodes {
    /// `/dev/media*` and `/dev/video*`, sorted.
    public static func scan(devDirectory: String = "/dev") -> [CameraDeviceNode] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: devDirectory)) ?? []
        return names.filter { $0.hasPrefix("media") || $0.hasPrefix("video") }
            .sorted()
            .map { name in
                let path = devDirectory + "/" + name
                return CameraDeviceNode(path: path, accessible: access(path, R_OK | W_OK) == 0)
            }
    }

    /// "no /dev/media* or /dev/video* nodes exist" or "/dev/media0 (no access), /dev/video0".
    public static func summary(_ nodes: [CameraDeviceNode]) -> String {
        if nodes.isEmpty { return "no /dev/media* or /dev/video* nodes exist" }
        return nodes.map { $0.accessible ? $0.path : "\($0.path) (no access)" }.joined(separator: ", ")
    }
}

extension CameraError {
    /// The "no camera" error: what was asked, what libcamera found, which device
    /// nodes exist, and the checklist a person can act on.
    public static func noDevice(selector: CameraSelector, found: [LibcameraCameraDescription],
                                libcameraVersion: String,
                                nodes: [CameraDeviceNode] = CameraDeviceNodes.scan()) -> CameraError {
        var text: String
        if found.isEmpty {
            text = "no camera found by libcamera \(libcameraVersion) (wanted \(selector))."
        } else {
            let list = found.enumerated().map { "#\($0.offset) \($0.element.summary)" }.joined(separator: "; ")
            text = "no camera matches \(selector); libcamera \(libcameraVersion) found \(found.count): \(list)."
        }
        text += " Device nodes: \(CameraDeviceNodes.summary(nodes))."
        if nodes.contains(where: { !$0.accessible }) {
            text += " Some nodes are not accessible: run the service as a member of the 'video' group."
        }
        text += " Check: the ribbon cable is seated at both ends (power off first, contacts the right way);"
        text += " /boot/firmware/config.txt has camera_auto_detect=1, or dtoverlay=<sensor> (e.g. dtoverlay=imx708) with camera_auto_detect=0;"
        text += " permissions on /dev/media* and /dev/video* (group video);"
        text += " `rpicam-hello --list-cameras` (or `cam -l`) lists the camera."
        if !found.isEmpty {
            text += " Or choose one that exists: camera = index, model, front/back/external or id:<fragment>."
        }
        return CameraError(.noDevice, text)
    }
}
