// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore

/// Free space and mount state of the file system holding a path (statvfs).
public struct FileSystemSpace: Equatable, Sendable {
    /// Bytes an unprivileged writer may still use (f_bavail).
    public var availableBytes: UInt64
    public var totalBytes: UInt64
    /// Mounted read-only (ST_RDONLY).
    public var readOnly: Bool

    public static func of(_ path: String) throws(SystemError) -> FileSystemSpace {
        var s = statvfs()
        try typedEINTR("statvfs", path: path) { statvfs(path, &s) }
        let unit = UInt64(s.f_frsize == 0 ? s.f_bsize : s.f_frsize)
        return FileSystemSpace(availableBytes: UInt64(s.f_bavail) * unit, totalBytes: UInt64(s.f_blocks) * unit,
                               readOnly: (UInt(s.f_flag) & UInt(ST_RDONLY)) != 0)
    }

    /// True when `path` is the root of a mounted file system (its device
    /// differs from its parent's, or it is its own parent).
    public static func isMountPoint(_ path: String) throws(SystemError) -> Bool {
        var a = stat(), b = stat()
        guard stat(path, &a) == 0 else { throw SystemError(errno: errno, call: "stat", path: path) }
        let parent = PlainIO.path(path, "..")
        guard stat(parent, &b) == 0 else { throw SystemError(errno: errno, call: "stat", path: parent) }
        return a.st_dev != b.st_dev || a.st_ino == b.st_ino
    }
}
