// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An open directory below the storage root; closed when dropped.
final class DirectoryHandle {
    let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    /// The storage root's DCIM. The root is the configuration's (it may be a link
    /// to the card's mount); DCIM below it must be a real directory.
    static func dcim(of storage: Storage) -> DirectoryHandle? {
        let root = open(storage.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else { return nil }
        defer { close(root) }
        return DirectoryHandle(at: root, "DCIM")
    }

    /// `name` in the directory `parent`: nil when missing, not a directory, or a link.
    convenience init?(at parent: Int32, _ name: String) {
        let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        self.init(fd: fd)
    }

    func subdirectory(_ name: String) -> DirectoryHandle? { DirectoryHandle(at: fd, name) }

    /// `name` here when it is a regular file (a link is not one: not followed).
    func regularFile(_ name: String) -> stat? {
        var st = stat()
        guard fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return st
    }

    /// `name` opened for reading when it is a regular file; the caller closes the fd.
    /// O_NONBLOCK: a FIFO swapped in after the check must not hang the open.
    func openRegularFile(_ name: String) -> (fd: Int32, stat: stat)? {
        let fd = openat(self.fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { close(fd); return nil }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return (fd, st)
    }

    /// The names in this directory.
    func names() -> [String] {
        let copy = dup(fd)
        guard copy >= 0, let dir = fdopendir(copy) else { if copy >= 0 { close(copy) }; return [] }
        defer { closedir(dir) }
        var out: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { out.append(name) }
        }
        return out
    }

    deinit { close(fd) }
}
