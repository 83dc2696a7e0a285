// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif

/// A failed system call, with errno and what it was doing.
public struct SystemError: Error, CustomStringConvertible, Equatable, Sendable {
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

    /// True for the errors that mean "the card is full" (see `NoSpace`).
    public var isNoSpace: Bool { NoSpace.means(errno) }
}

/// The one no-space classification: ENOSPC (the file system is full) and
/// EDQUOT (the user's quota is used up) both mean "the card is full", for
/// photos, recordings and the storage checks alike. Everything that turns an
/// errno into "full" asks here.
public enum NoSpace {
    public static func means(_ errno: Int32) -> Bool { errno == ENOSPC || errno == EDQUOT }

    /// `means(_:)` for an errno that may be absent (nil: not a system call's failure).
    public static func means(_ errno: Int32?) -> Bool { errno.map(means) ?? false }
}

/// Runs a system call, retrying on EINTR; throws SystemError on -1.
@discardableResult
public func retryingEINTR<T: BinaryInteger>(_ call: String, path: String? = nil, _ body: () -> T) throws -> T {
    try typedEINTR(call, path: path, body)
}

/// `retryingEINTR` with its error type spelled out, for typed-throws callers.
@discardableResult
public func typedEINTR<T: BinaryInteger>(_ call: String, path: String? = nil, _ body: () -> T) throws(SystemError) -> T {
    while true {
        let r = body()
        if r != -1 { return r }
        let e = errno
        if e == EINTR { continue }
        throw SystemError(errno: e, call: call, path: path)
    }
}
