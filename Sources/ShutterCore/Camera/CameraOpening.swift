// SPDX-License-Identifier: BSD-2-Clause
/// What a camera is opened with, as against the controls it takes while it
/// runs: the stream sizes (libcamera configures them before the start) and
/// the sensor's own HDR mode (a sensor control set before libcamera opens the
/// camera, as rpicam-apps' `--hdr sensor` does). Changing any of them at
/// runtime restarts the camera, between captures (`shutterctl set`).
public struct CameraOpening: Sendable, Equatable, CustomStringConvertible {
    /// Video and still sizes, best first.
    public var videoSizes: [PixelSize]
    public var stillSizes: [PixelSize]
    /// `camera.hdr` is `sensor`: the sensor's HDR mode on (where it has one).
    public var sensorHDR: Bool

    public init(videoSizes: [PixelSize], stillSizes: [PixelSize], sensorHDR: Bool) {
        self.videoSizes = videoSizes
        self.stillSizes = stillSizes
        self.sensorHDR = sensorHDR
    }

    /// The opening a configuration asks for.
    public init(_ config: ShutterConfig) {
        self.init(videoSizes: config.videoSizes, stillSizes: config.stillSizes,
                  sensorHDR: config.camera.controls.hdr == .sensor)
    }

    /// The settable keys whose change restarts the camera. `camera.hdr` does
    /// only to or from `sensor`; its other values are controls of the running camera.
    public static let keys = ["video.sizes", "still.sizes", "camera.hdr"]

    /// "video 1280x720, stills 640x480, sensor HDR on".
    public var description: String {
        "video " + videoSizes.map(\.description).joined(separator: " or ")
            + ", stills " + stillSizes.map(\.description).joined(separator: " or ")
            + ", sensor HDR " + (sensorHDR ? "on" : "off")
    }
}
