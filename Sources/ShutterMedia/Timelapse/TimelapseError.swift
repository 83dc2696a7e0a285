// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// Why a time-lapse was not made: a code to act on, a message that says what to do. Nothing
/// is left under the film's name whatever the code.
public typealias TimelapseError = CodedError<TimelapseErrorCode>

public enum TimelapseErrorCode: String, ErrorCode {
    /// No photo in the range (or none of them decodes).
    case noPhotos
    /// The card has not the room the film needs (checked before, or ENOSPC on the way).
    case noSpace
    /// A film of that name is on the card already.
    case exists
    /// A photo does not decode (skipped; fatal only when none does).
    case decodeFailed
    /// The encoder would not open or failed.
    case encoderFailed
    /// A write, sync or rename failed.
    case ioError
    /// Stopped on request (shutterd stopping, `timelapse cancel`).
    case cancelled
    /// A setting is out of range (fps, size).
    case invalidSettings
}
