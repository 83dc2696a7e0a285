// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif

/// Why a GPIO line could not be used, with what a person should check.
public struct GPIOError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
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

    public var code: Code
    public var message: String
    /// The errno the library reported, when there was one.
    public var errno: Int32

    public init(code: Code, message: String, errno: Int32 = 0) {
        self.code = code
        self.message = message
        self.errno = errno
    }

    public var description: String { "GPIO \(code.rawValue): \(message)" }

    /// Maps a request failure (-errno from the shim) on a known line.
    static func requestFailed(_ rc: Int32, what: String, line: GPIOLineLocation) -> GPIOError {
        let e = -rc
        let at = "\(line.chipPath) line \(line.offset)"
        switch e {
        case EBUSY:
            return GPIOError(code: .busy, message: "\(what) (\(at)) is in use by another program or driver. "
                + "Stop the other user (is a second shutterd running? `gpioinfo` shows the consumer) "
                + "or choose another pin in the board config.", errno: e)
        case EACCES, EPERM:
            return GPIOError(code: .permissionDenied, message: "\(what) (\(at)): permission denied. "
                + "Add the service user to the `gpio` group or check the udev rule for /dev/gpiochip*.",
                errno: e)
        case ENOENT, EINVAL:
            return GPIOError(code: .lineNotFound, message: "\(what): \(at) does not exist on that chip. "
                + "Check the pin number in the board config.", errno: e)
        default:
            return GPIOError(code: .ioError, message: "\(what) (\(at)): \(String(cString: strerror(e))) "
                + "(errno \(e)). Check that the GPIO chip is still present.", errno: e)
        }
    }
}
