// SPDX-License-Identifier: BSD-2-Clause
/// What went wrong with a camera, real or simulated, as a small code for the service's policy
/// (restart, back off, LED pattern) and a message that tells a person what to do.
public struct CameraError: Error, CustomStringConvertible, Equatable, Sendable {
    public enum Code: String, Sendable {
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

    public var code: Code
    public var message: String
    /// The negative errno a shim call returned, when there was one (as a positive value).
    public var errno: Int32?

    public init(_ code: Code, _ message: String, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.errno = errno
    }

    public var description: String { "camera \(code.rawValue): \(message)" }
}
