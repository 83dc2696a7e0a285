// SPDX-License-Identifier: BSD-2-Clause
import ShutterStorage

/// Why a recording failed or stopped early. `message` says what to do about it.
public struct RecordingError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Codable {
        case invalidSettings     // a setting is out of range
        case encoderMissing      // this FFmpeg has no encoder of that name
        case encoderFailed       // the encoder would not open or failed mid-way
        case noSpace             // the card is full (ENOSPC / EDQUOT)
        case ioError             // any other write/sync failure
        case pathUnavailable     // the storage policy gave no file name
        case invalidFrame        // a frame of a size/format the clip was not opened with
    }

    public var code: Code
    public var message: String
    /// errno of the failed system call, when there was one.
    public var errno: Int32?

    public init(_ code: Code, _ message: String, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.errno = errno
    }

    public var description: String { "recording \(code.rawValue): \(message)" }

    /// The card is full: `.noSpace`, or a failed call whose errno means no
    /// space (ENOSPC or EDQUOT, the one classification in `NoSpace`).
    public var isNoSpace: Bool { code == .noSpace || NoSpace.means(errno) }
}
