// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterStorage

/// A failure making or writing a photo: a small code the service can act on and
/// a message that tells a person what to do.
public typealias MediaError = CodedError<MediaErrorCode>

public enum MediaErrorCode: String, ErrorCode {
    /// The frame's pixel format cannot be encoded.
    case unsupportedFormat
    /// The frame's planes are missing, too small, or have impossible strides.
    case invalidFrame
    /// A setting (quality, rotation) is out of range.
    case invalidSetting
    /// libjpeg-turbo refused to encode.
    case encoderFailed
    /// libexif could not build the EXIF block, or it does not fit in APP1.
    case exifFailed
    /// The storage is full: nothing was written.
    case noSpace
    /// Any other write failure: nothing was written under the final name.
    case writeFailed
}

extension MediaError {
    /// Wraps a failed write: the photo is absent, say why and what to do.
    static func writing(_ error: any Error, path: String) -> MediaError {
        if let sys = error as? SystemError, sys.isNoSpace {
            return MediaError(.noSpace, "no space left for \(path): free space on the card or "
                              + "lower the quality; nothing was written (\(sys))")
        }
        if let media = error as? MediaError { return media }
        return MediaError(.writeFailed, "could not write \(path): \(error); nothing was written, "
                          + "check the card is mounted read-write")
    }
}
