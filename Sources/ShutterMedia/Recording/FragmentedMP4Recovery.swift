// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterStorage

/// Repairs a recording cut off by a power cut or a kill in the middle of writing a
/// fragment: walks the top-level MP4 boxes and truncates the file after the last whole
/// fragment (a `moof` with its complete `mdat`). The service runs it at start on the
/// clip that was open; what remains decodes without error.
public enum FragmentedMP4Recovery {
    /// Returns the number of bytes cut (0 when the file was whole).
    /// Throws `SystemError` when the file cannot be read, cut or synced.
    @discardableResult
    public static func truncateToLastWholeFragment(path: String) throws -> Int64 {
        let fd = try retryingEINTR("open", path: path) { open(path, O_RDWR | O_CLOEXEC) }
        defer { close(fd) }
        var st = stat()
        try retryingEINTR("fstat", path: path) { fstat(fd, &st) }
        let size = Int64(st.st_size)
        let good = try wholeLength(fd: fd, size: size, path: path)
        guard good < size else { return 0 }
        try retryingEINTR("ftruncate", path: path) { ftruncate(fd, off_t(good)) }
        try retryingEINTR("fsync", path: path) { fsync(fd) }
        return size - good
    }

    /// Length of the file up to the end of its last whole box, not counting a `moof`
    /// whose `mdat` is missing or short.
    static func wholeLength(fd: Int32, size: Int64, path: String) throws -> Int64 {
        var good: Int64 = 0
        for box in try boxes(fd: fd, size: size, path: path) {
            // A fragment is whole only once its media data is: the moof waits for its mdat.
            if box.type != "moof" { good = box.end }
        }
        return good
    }

    /// The whole top-level boxes of the file, in order (a box cut short ends the list).
    static func boxes(fd: Int32, size: Int64, path: String) throws -> [(type: String, end: Int64)] {
        var offset: Int64 = 0
        var found: [(type: String, end: Int64)] = []
        var header = [UInt8](repeating: 0, count: 16)
        while offset + 8 <= size {
            let n = try retryingEINTR("pread", path: path) {
                header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 16, off_t(offset)) }
            }
            guard n >= 8 else { break }
            var boxSize = Int64(header[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            let type = String(decoding: header[4..<8], as: UTF8.self)
            if boxSize == 1 {
                guard n >= 16 else { break }
                boxSize = Int64(bitPattern: header[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            } else if boxSize == 0 {
                boxSize = size - offset // "to the end of the file"
            }
            guard boxSize >= 8, offset + boxSize <= size else { break }
            offset += boxSize
            found.append((type, offset))
        }
        return found
    }
}
