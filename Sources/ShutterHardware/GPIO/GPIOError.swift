// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

/// Why a GPIO line could not be used, with what a person should check; `errno`:
/// the one the library reported, when there was one.
public typealias GPIOError = CodedError<GPIOErrorCode>

public enum GPIOErrorCode: String, ErrorCode {
    public static let subject: String? = "GPIO"
    /// No chip with any of the wanted labels (or no chip at all).
    case chipNotFound
    /// The chip exists but has no line with that name or offset.
    case lineNotFound
    /// Another consumer (a second shutterd, a gpioset, a kernel driver) holds the line.
    case busy
    /// /dev/gpiochip* exists but this user may not open it.
    case permissionDenied
    /// Any other failure of the GPIO character device (chip gone, I/O error).
    case ioError
}

extension GPIOError {
    /// Maps a request failure (-errno from the shim) on a known line.
    static func requestFailed(_ rc: Int32, what: String, line: GPIOLineLocation) -> GPIOError {
        let e = -rc
        let at = "\(line.chipPath) line \(line.offset)"
        switch e {
        case EBUSY:
            return GPIOError(.busy, "\(what) (\(at)) is in use by another program or driver. "
                + "Stop the other user (is a second shutterd running? `gpioinfo` shows the consumer) "
                + "or choose another pin in the board config.", errno: e)
        case EACCES, EPERM:
            return GPIOError(.permissionDenied, "\(what) (\(at)): permission denied. "
                + "Add the service user to the `gpio` group or check the udev rule for /dev/gpiochip*.",
                errno: e)
        case ENOENT, EINVAL:
            return GPIOError(.lineNotFound, "\(what): \(at) does not exist on that chip. "
                + "Check the pin number in the board config.", errno: e)
        default:
            return GPIOError(.ioError, "\(what) (\(at)): \(String(cString: strerror(e))) "
                + "(errno \(e)). Check that the GPIO chip is still present.", errno: e)
        }
    }
}
