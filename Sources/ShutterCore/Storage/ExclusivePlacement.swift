#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Moves a finished file to its final name only if that name is free, so a
/// stale counter or a second writer can never clobber a photo.
/// `renameat2(RENAME_NOREPLACE)` first (atomic; FAT supports it too), looked
/// up at run time because Swift's Glibc module does not export it; where the
/// kernel or file system refuses the flag, `link` + `unlink` (also exclusive).
public enum ExclusivePlacement {
    private typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UInt32) -> Int32
    private static let renameNoReplace: UInt32 = 1

    /// Throws `SystemError` with errno EEXIST when `destination` exists;
    /// `source` is then left in place for the caller to remove or retry.
    public static func move(_ source: String, to destination: String, allowRenameat2: Bool = true) throws(SystemError) {
        if allowRenameat2, let sym = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "renameat2") {
            let renameat2 = unsafeBitCast(sym, to: RenameAt2.self)
            while true {
                if renameat2(AT_FDCWD, source, AT_FDCWD, destination, renameNoReplace) == 0 { return }
                let e = errno
                if e == EINTR { continue }
                if e == EINVAL || e == ENOSYS || e == ENOTSUP { break } // flag unsupported here: fall back
                throw SystemError(errno: e, call: "renameat2", path: destination)
            }
        }
        try typedEINTR("link", path: destination) { link(source, destination) }
        unlink(source)
    }
}

extension AtomicFile {
    /// Like `write(to:_:)`, but the final step never replaces an existing
    /// file: throws `SystemError` EEXIST (and removes the temp file) instead.
    public static func writeExclusive(to path: String, _ write: (Int32) throws -> Void) throws {
        let dir = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let tmp = (dir as NSString).appendingPathComponent(".\(name).tmp-\(getpid())")
        let fd = try retryingEINTR("open", path: tmp) { open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        var closed = false
        do {
            try write(fd)
            try retryingEINTR("fsync", path: tmp) { fsync(fd) }
            closed = true
            if close(fd) != 0 && errno != EINTR { throw SystemError(errno: errno, call: "close", path: tmp) }
            try ExclusivePlacement.move(tmp, to: path)
        } catch {
            if !closed { close(fd) }
            unlink(tmp)
            throw error
        }
        try fsyncDirectory(dir)
    }
}
