// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterStorage

/// A finished photo in memory: SOI, the EXIF APP1 segment (with thumbnail), then
/// the JPEG stream. Writing it is all-or-nothing.
public struct EncodedStill: Sendable {
    public let jpeg: [UInt8]
    public let width: Int
    public let height: Int
    /// Size of the APP1 segment including its marker, and of the thumbnail inside it.
    public let exifByteCount: Int
    public let thumbnailByteCount: Int

    /// Writes the photo so that `path` holds either the whole JPEG or nothing:
    /// temp file, fsync, rename, directory fsync (AtomicFile), never replacing
    /// a file already at `path`. Throws `MediaError` `.noSpace` or
    /// `.writeFailed` (also when `path` exists); no temp file is left behind.
    public func write(to path: String) throws {
        try write(to: path) { fd, bytes in try AtomicFile.writeAll(fd: fd, bytes: bytes, path: path) }
    }

    /// The write with its byte pump injectable, so a test can fail it midway.
    func write(to path: String, pump: (Int32, UnsafeRawBufferPointer) throws -> Void) throws {
        do {
            try jpeg.withUnsafeBytes { bytes in
                try AtomicFile.write(to: path) { fd in try pump(fd, bytes) }
            }
        } catch {
            throw MediaError.writing(error, path: path)
        }
    }
}
