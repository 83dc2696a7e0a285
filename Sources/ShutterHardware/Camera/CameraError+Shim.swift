// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

extension CameraError {
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
