// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif

/// What an MP4 on the card is, from its top-level boxes alone: a finished regular file
/// (`ftyp`, a `moov`, no `moof`, boxes that end exactly at the end of the file), or not
/// (the fragmented file a clip is recorded as, a clip cut short by a power loss before it
/// was finished, anything truncated). The uploader copies only finished ones.
public enum MP4Shape {
    public static func isFinishedRegular(path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return false }
        let size = UInt64(st.st_size)
        var offset: UInt64 = 0
        var sawFtyp = false, sawMoov = false
        var header = [UInt8](repeating: 0, count: 16)
        while offset < size {
            guard size - offset >= 8, pread(fd, &header, 16, off_t(offset)) >= 8 else { return false }
            var boxSize = header[0..<4].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let type = String(decoding: header[4..<8], as: UTF8.self)
            if boxSize == 1 {
                guard size - offset >= 16 else { return false }
                boxSize = header[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            }
            // 0 = "to the end of the file": a file still being written.
            guard boxSize >= 8, boxSize <= size - offset else { return false }
            if offset == 0 { sawFtyp = type == "ftyp" }
            if type == "moov" { sawMoov = true }
            if type == "moof" { return false }
            offset += boxSize
        }
        return sawFtyp && sawMoov && offset == size
    }
}
