// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterStorage

/// Why a recording failed or stopped early. `message` says what to do about it;
/// `errno`: the failed system call's, when there was one.
public typealias RecordingError = CodedError<RecordingErrorCode>

public enum RecordingErrorCode: String, ErrorCode, Codable {
    public static let subject: String? = "recording"
    case invalidSettings     // a setting is out of range
    case encoderMissing      // this FFmpeg has no encoder of that name
    case encoderFailed       // the encoder would not open or failed mid-way
    case noSpace             // the card is full (ENOSPC / EDQUOT)
    case ioError             // any other write/sync failure
    case pathUnavailable     // the storage policy gave no file name
    case invalidFrame        // a frame of a size/format the clip was not opened with
}

extension RecordingError {
    /// The card is full: `.noSpace`, or a failed call whose errno means no
    /// space (ENOSPC or EDQUOT, the one classification in `NoSpace`).
    public var isNoSpace: Bool { code == .noSpace || NoSpace.means(errno) }
}
