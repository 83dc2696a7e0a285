// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

/// The one `Range` form the server honours: a single byte range (RFC 9110 §14.2).
/// libmicrohttpd has no Range support; a phone seeking in a clip needs it.
public enum ByteRangeAnswer: Equatable, Sendable {
    /// No usable Range (absent, malformed, several ranges, another unit): send it all (200).
    case whole
    /// Bytes `start...end` (206, `Content-Range: bytes start-end/size`).
    case part(start: UInt64, end: UInt64)
    /// Starts past the end (416, `Content-Range: bytes */size`).
    case unsatisfiable
}

public enum ByteRange {
    public static func answer(_ header: String?, size: UInt64) -> ByteRangeAnswer {
        guard let header else { return .whole }
        let text = header.trimmedSpaces
        guard text.lowercased().hasPrefix("bytes=") else { return .whole }
        let spec = text.dropFirst(6).trimmedSpaces
        // Several ranges may be ignored (RFC 9110 §14.2): the whole file is a valid answer.
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .whole }
        let first = spec[..<dash].trimmedSpaces
        let last = spec[spec.index(after: dash)...].trimmedSpaces
        // A position that is not a whole number 0...Int.max makes the Range unusable (ignored).
        func number(_ s: String) -> UInt64? { (try? RequestNumber.bytePosition.integer(text: s)).map { UInt64($0) } }
        if first.isEmpty {
            // bytes=-N: the last N bytes.
            guard let n = number(last) else { return .whole }
            guard n > 0, size > 0 else { return .unsatisfiable }
            return .part(start: size - min(n, size), end: size - 1)
        }
        guard let start = number(first) else { return .whole }
        var end = size == 0 ? 0 : size - 1
        if !last.isEmpty {
            guard let e = number(last), e >= start else { return .whole }
            end = min(e, end)
        }
        guard start < size else { return .unsatisfiable }
        return .part(start: start, end: end)
    }
}
