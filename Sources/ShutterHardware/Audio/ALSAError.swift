// SPDX-License-Identifier: BSD-2-Clause
import CALSA
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

/// Why the microphone cannot capture, with what a person should do about it;
/// `errno`: the one ALSA returned (negated), when there was one.
public typealias ALSAError = CodedError<ALSAErrorCode>

public enum ALSAErrorCode: String, ErrorCode {
    public static let subject: String? = "ALSA"
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

extension ALSAError {
    static func text(_ rc: Int32) -> String { String(cString: snd_strerror(rc)) }

    /// Maps a failure to open or set up `device`.
    static func openFailed(_ rc: Int32, device: String, call: String) -> ALSAError {
        let cards = ALSACaptureDevices.list()
        let found = cards.isEmpty ? "no sound cards at all"
            : "cards: " + cards.map(\.description).joined(separator: ", ")
        switch -rc {
        case ENOENT, ENODEV, ENXIO:
            return ALSAError(.noCaptureDevice,
                             "No capture device \"\(device)\" (\(call): \(text(rc)); \(found)). "
                                + "Plug in a USB microphone, check `arecord -l`, or set the audio device "
                                + "(\"auto\", \"default\", \"plughw:CARD=...\") in the config.",
                             errno: -rc)
        case EACCES, EPERM:
            return ALSAError(.permissionDenied,
                             "Cannot open \"\(device)\": permission denied. Add the service user "
                                + "to the `audio` group (or check the permissions of /dev/snd/*).",
                             errno: -rc)
        case EBUSY:
            return ALSAError(.busy,
                             "\"\(device)\" is in use by another program. Stop it (`fuser -v "
                                + "/dev/snd/*`) or use a `dsnoop` device.", errno: -rc)
        case EINVAL:
            return ALSAError(.unsupportedFormat,
                             "\"\(device)\" refused the capture format (\(call): \(text(rc))). "
                                + "Use a plughw: device so ALSA converts, or another channel count.",
                             errno: -rc)
        default:
            return ALSAError(.ioError, "\"\(device)\": \(call) failed: \(text(rc)).", errno: -rc)
        }
    }
}
