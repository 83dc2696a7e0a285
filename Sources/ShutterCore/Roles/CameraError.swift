// SPDX-License-Identifier: BSD-2-Clause
/// What went wrong with a camera, real or simulated, as a small code for the service's policy
/// (restart, back off, LED pattern) and a message that tells a person what to do; `errno`: the
/// negative errno a shim call returned, when there was one (as a positive value).
public typealias CameraError = CodedError<CameraErrorCode>

public enum CameraErrorCode: String, ErrorCode {
    public static let subject: String? = "camera"
    /// No camera present, or none matches the selector.
    case noDevice
    /// Another process (or another open) holds the camera.
    case busy
    /// The camera went away while in use (cable, USB unplug).
    case disconnected
    /// The pipeline rejected the configuration or a control value.
    case rejected
    /// No frame arrived in time.
    case timeout
    /// The camera delivers something this service cannot use (e.g. MJPEG only).
    case unsupported
    /// Any other libcamera or system failure, with its errno.
    case system
}
