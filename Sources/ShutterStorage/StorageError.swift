// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

/// Why a capture cannot be stored. The service shows `code` as an LED error
/// pattern, logs `message` (which says what to do) and stays up; `errno`: the
/// failed system call's, when there was one.
public typealias StorageError = CodedError<StorageErrorCode>

public enum StorageErrorCode: String, ErrorCode {
    public static let subject: String? = "storage"
    /// Not enough free space for the capture (or the card's numbers are used up).
    case full
    /// The storage root is absent or not mounted.
    case missing
    /// The file system is read-only or not writable by the service.
    case readOnly
    /// Any other failure of the card or file system (EIO...).
    case ioError
}

extension StorageError {
    /// Classifies a failed system call by errno (no space: `NoSpace`).
    public init(_ error: SystemError) {
        if error.isNoSpace {
            self.init(.full, "the storage is full (\(error)); free some space", errno: error.errno)
            return
        }
        switch error.errno {
        case EROFS, EACCES, EPERM:
            self.init(.readOnly, "the storage is not writable (\(error)); check the card's lock switch, "
                        + "the mount options and the directory's owner", errno: error.errno)
        case ENOENT, ENODEV, ENXIO, ENOTDIR, ESTALE:
            self.init(.missing, "the storage went away (\(error)); insert or mount the card", errno: error.errno)
        case EMFILE, ENFILE:
            // Not the card: the process (or the system) has no descriptor left.
            self.init(.ioError, "the service has too many files open (\(error)), not a fault of the card: "
                        + "network viewers may be holding connections (they are bounded and closed when idle); "
                        + "if it lasts, raise LimitNOFILE or restart shutterd", errno: error.errno)
        default:
            self.init(.ioError, "storage I/O error (\(error)); the card may be failing: copy the files off "
                        + "and check it", errno: error.errno)
        }
    }

    /// A size in MB with one decimal, for messages.
    public static func megabytes(_ bytes: UInt64) -> String {
        let tenths = (bytes * 10 + 524_288) / 1_048_576
        return "\(tenths / 10).\(tenths % 10) MB"
    }
}
