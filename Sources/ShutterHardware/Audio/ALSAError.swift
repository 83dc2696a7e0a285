// SPDX-License-Identifier: BSD-2-Clause
import CALSA
#if canImport(Glibc)
import Glibc
#endif

/// Why the microphone cannot capture, with what a person should do about it.
public struct ALSAError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// No such PCM, no sound card, or no USB capture card for "auto".
        case noCaptureDevice
        /// /dev/snd/* exists but this user may not open it.
        case permissionDenied
        /// Another program holds the capture device.
        case busy
        /// The device refused S16_LE, the channel count or any usable rate.
        case unsupportedFormat
        /// The device went away while capturing (USB unplugged).
        case deviceGone
        /// Any other ALSA failure.
        case ioError
    }

    public var code: Code
    public var message: String
    /// The negative errno ALSA returned, when there was one.
    public var alsaCode: Int32

    public init(code: Code, message: String, alsaCode: Int32 = 0) {
        self.code = code
        self.message = message
        self.alsaCode = alsaCode
    }

    public var description: String { "ALSA \(code.rawValue): \(message)" }

    static func text(_ rc: Int32) -> String { String(cString: snd_strerror(rc)) }

    /// Maps a failure to open or set up `device`.
    static func openFailed(_ rc: Int32, device: String, call: String) -> ALSAError {
        let cards = ALSACaptureDevices.list()
        let found = cards.isEmpty ? "no sound cards at all"
            : "cards: " + cards.map(\.description).joined(separator: ", ")
        switch -rc {
        case ENOENT, ENODEV, ENXIO:
            return ALSAError(code: .noCaptureDevice,
                             message: "No capture device \"\(device)\" (\(call): \(text(rc)); \(found)). "
                                + "Plug in a USB microphone, check `arecord -l`, or set the audio device "
                                + "(\"auto\", \"default\", \"plughw:CARD=...\") in the config.",
                             alsaCode: rc)
        case EACCES, EPERM:
            return ALSAError(code: .permissionDenied,
                             message: "Cannot open \"\(device)\": permission denied. Add the service user "
                                + "to the `audio` group (or check the permissions of /dev/snd/*).",
                             alsaCode: rc)
        case EBUSY:
            return ALSAError(code: .busy,
                             message: "\"\(device)\" is in use by another program. Stop it (`fuser -v "
                                + "/dev/snd/*`) or use a `dsnoop` device.", alsaCode: rc)
        case EINVAL:
            return ALSAError(code: .unsupportedFormat,
                             message: "\"\(device)\" refused the capture format (\(call): \(text(rc))). "
                                + "Use a plughw: device so ALSA converts, or another channel count.",
                             alsaCode: rc)
        default:
            return ALSAError(code: .ioError, message: "\"\(device)\": \(call) failed: \(text(rc)).",
                             alsaCode: rc)
        }
    }
}
