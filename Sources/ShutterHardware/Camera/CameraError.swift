#if canImport(Glibc)
import Glibc
#endif

/// What went wrong with the camera, as a small code for the service's policy
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

    /// Maps a shim return code (-errno) for `call` to an error.
    static func fromShim(_ result: Int32, _ call: String) -> CameraError {
        let e = -result
        let what = String(cString: strerror(e))
        switch e {
        case ENODEV, ENOENT:
            return CameraError(.disconnected, "\(call): the camera is gone (\(what)); check the cable or USB connection, the service will retry", errno: e)
        case EBUSY:
            return CameraError(.busy, "\(call): the camera is in use by another process (\(what)); stop other camera apps (rpicam-*, libcamera-*, motion) and retry", errno: e)
        case EINVAL, ERANGE:
            return CameraError(.rejected, "\(call): libcamera rejected the request (\(what)); check the camera size, format and control settings", errno: e)
        case ENOTSUP:
            return CameraError(.unsupported, "\(call): this camera does not support it (\(what))", errno: e)
        case ETIMEDOUT:
            return CameraError(.timeout, "\(call): timed out (\(what))", errno: e)
        default:
            return CameraError(.system, "\(call): \(what) (errno \(e))", errno: e)
        }
    }
}
