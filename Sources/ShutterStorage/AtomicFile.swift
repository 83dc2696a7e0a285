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

/// The one way a finished file is written: it is either whole under its final
/// name or absent. Temp file in the same directory, write, fsync, rename that
/// never replaces another file, fsync the directory. A crash (or ENOSPC) at any
/// point leaves no partial file under the final name, and the temp file is
/// removed on every error.
public enum AtomicFile {
    /// What the rename does when the final name is taken.
    public enum Placement: Sendable {
        /// Never replace: throw `SystemError` EEXIST (photos, and everything else).
        case exclusive
        /// Replace it atomically: only for a file rewritten in place (the
        /// file-number counter), where the old version is the one to lose.
        case replacing
    }

    /// `write` receives the open fd of the temp file and writes the contents.
    /// Throws `SystemError` for a failed system call (EEXIST: the name is
    /// taken) and whatever `write` throws, as it is. `sync`: the card's (a file on
    /// the card is synced through `Storage.cardSync`).
    public static func write(to path: String, placement: Placement = .exclusive, sync: CardSync = CardSync(),
                             _ write: (Int32) throws -> Void) throws {
        let dir = PlainIO.deletingLastComponent(path)
        let name = PlainIO.lastComponent(path)
        let tmp = PlainIO.path(dir, ".\(name).tmp-\(getpid())")
        let fd = try typedEINTR("open", path: tmp) { open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        var closed = false
        do {
            try write(fd)
            try typedEINTR("fsync", path: tmp) { sync.fsync(fd, path: tmp) }
            closed = true
            if close(fd) != 0 && errno != EINTR { throw SystemError(errno: errno, call: "close", path: tmp) }
            switch placement {
            case .exclusive: try ExclusivePlacement.move(tmp, to: path)
            case .replacing: try typedEINTR("rename", path: path) { rename(tmp, path) }
            }
        } catch {
            if !closed { close(fd) }
            unlink(tmp)
            throw error
        }
        try fsyncDirectory(dir, sync: sync)
    }

    /// `write(to:placement:_:)` for bytes already in memory.
    public static func write(to path: String, placement: Placement = .exclusive, sync: CardSync = CardSync(),
                             bytes: UnsafeRawBufferPointer) throws {
        try write(to: path, placement: placement, sync: sync) { fd in try writeAll(fd: fd, bytes: bytes, path: path) }
    }

    public static func writeAll(fd: Int32, bytes: UnsafeRawBufferPointer, path: String? = nil) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let n = try typedEINTR("write", path: path) {
                Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            }
            offset += n
        }
    }

    /// The whole of a small file written by `write` (a counter, a state file); nil when
    /// there is none. A file longer than `limit` bytes is not one of ours: EFBIG.
    public static func read(_ path: String, limit: Int) throws(SystemError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let e = errno
            if e == ENOENT { return nil }
            throw SystemError(errno: e, call: "open", path: path)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = try typedEINTR("read", path: path) { buf.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
            if n == 0 { return bytes }
            bytes += buf[0..<n]
            if bytes.count > limit { throw SystemError(errno: EFBIG, call: "read", path: path) }
        }
    }

    /// Makes a rename, creation or removal in `dir` durable.
    public static func fsyncDirectory(_ dir: String, sync: CardSync = CardSync()) throws(SystemError) {
        let dfd = try typedEINTR("open", path: dir) { open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { close(dfd) }
        try typedEINTR("fsync", path: dir) { sync.fsync(dfd, path: dir) }
    }
}
