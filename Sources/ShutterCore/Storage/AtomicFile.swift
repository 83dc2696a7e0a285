#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A failed system call, with errno and what it was doing.
public struct SystemError: Error, CustomStringConvertible, Equatable {
    public var errno: Int32
    public var call: String
    public var path: String?

    public init(errno: Int32, call: String, path: String? = nil) {
        self.errno = errno
        self.call = call
        self.path = path
    }

    public var description: String {
        let what = String(cString: strerror(errno))
        if let path { return "\(call)(\(path)): \(what) (errno \(errno))" }
        return "\(call): \(what) (errno \(errno))"
    }

    /// True for the errors that mean "the card is full".
    public var isNoSpace: Bool { errno == ENOSPC || errno == EDQUOT }
}

/// Runs a system call, retrying on EINTR; throws SystemError on -1.
@discardableResult
public func retryingEINTR<T: BinaryInteger>(_ call: String, path: String? = nil, _ body: () -> T) throws -> T {
    while true {
        let r = body()
        if r != -1 { return r }
        let e = errno
        if e == EINTR { continue }
        throw SystemError(errno: e, call: call, path: path)
    }
}

/// Writes a file so that it is either whole under its final name or absent:
/// temp file in the same directory, write, fsync, rename, fsync the directory.
/// A crash (or ENOSPC) at any point leaves no partial file under `path`.
public enum AtomicFile {
    /// `write` receives the open fd of the temp file and writes the contents.
    public static func write(to path: String, _ write: (Int32) throws -> Void) throws {
        let dir = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let tmp = (dir as NSString).appendingPathComponent(".\(name).tmp-\(getpid())")
        let fd = try retryingEINTR("open", path: tmp) { open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        var done = false
        defer {
            if !done { close(fd); unlink(tmp) }
        }
        try write(fd)
        try retryingEINTR("fsync", path: tmp) { fsync(fd) }
        done = true
        guard close(fd) == 0 || errno == EINTR else {
            let e = errno
            unlink(tmp)
            throw SystemError(errno: e, call: "close", path: tmp)
        }
        do {
            try retryingEINTR("rename", path: path) { rename(tmp, path) }
        } catch {
            unlink(tmp)
            throw error
        }
        try fsyncDirectory(dir)
    }

    public static func write(to path: String, bytes: UnsafeRawBufferPointer) throws {
        try write(to: path) { fd in try writeAll(fd: fd, bytes: bytes, path: path) }
    }

    public static func writeAll(fd: Int32, bytes: UnsafeRawBufferPointer, path: String? = nil) throws {
        var offset = 0
        while offset < bytes.count {
            let n = try retryingEINTR("write", path: path) {
                Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            }
            offset += n
        }
    }

    public static func fsyncDirectory(_ dir: String) throws {
        let dfd = try retryingEINTR("open", path: dir) { open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { close(dfd) }
        try retryingEINTR("fsync", path: dir) { fsync(dfd) }
    }
}
