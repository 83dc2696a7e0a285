// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterMedia
import ShutterBuild

/// What a photo's EXIF and a clip's MP4 keys say about the camera: one rule for both.
/// Make and model are the configured ones (`exif.make`, `exif.model`), else the camera's;
/// the orientation is the configured one unless the camera applied it to the pixels.
enum CameraLabels {
    static func make(_ config: ShutterConfig, _ camera: CameraInfo?) -> String {
        config.exif.make.isEmpty ? (camera?.make ?? "Shutter") : config.exif.make
    }

    static func model(_ config: ShutterConfig, _ camera: CameraInfo?) -> String {
        config.exif.model.isEmpty ? (camera?.model ?? "Camera") : config.exif.model
    }

    /// Rotation and flips still to apply when showing the picture.
    static func orientation(_ config: ShutterConfig, cameraAppliesTransform: Bool) -> (rotation: Int, hflip: Bool, vflip: Bool) {
        cameraAppliesTransform ? (0, false, false) : (config.camera.rotation, config.camera.hflip, config.camera.vflip)
    }

    static func clip(_ config: ShutterConfig, _ camera: CameraInfo?, cameraAppliesTransform: Bool) -> ClipLabels {
        let o = orientation(config, cameraAppliesTransform: cameraAppliesTransform)
        return ClipLabels(make: make(config, camera), model: model(config, camera), software: ShutterVersion.software,
                          rotation: o.rotation, hflip: o.hflip, vflip: o.vflip)
    }
}
