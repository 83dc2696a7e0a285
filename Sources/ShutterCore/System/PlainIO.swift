// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few file and descriptor calls ShutterCore and shutterctl need that
/// FoundationEssentials lacks (FileHandle, NSString paths, reading a file with the
/// system's reason for a failure). ShutterCore and shutterctl's modules import
/// FoundationEssentials, not Foundation, so a static shutterctl carries no ICU data.
public enum PlainIO {
    /// Writes every byte to the descriptor (1 standard output, 2 standard error),
    /// unbuffered like FileHandle.write; gives up on an error other than EINTR.
    public static func write(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { systemWrite(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 { if errno == EINTR { continue }; return }
            offset += n
        }
    }

    public static func write(_ fd: Int32, _ text: String) { write(fd, Array(text.utf8)) }

    /// A failed system call: its errno and the system's words for it.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var errno: Int32
        public init(errno: Int32) { self.errno = errno }
        public var description: String { String(cString: strerror(errno)) }
    }

    /// The whole file's bytes.
    public static func readFile(_ path: String) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(errno: errno) }
        defer { close(fd) }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n < 0 { if errno == EINTR { continue }; throw Failure(errno: errno) }
            if n == 0 { return out }
            out.append(contentsOf: buf[0..<n])
        }
    }

    /// Whether the path names a directory (following symlinks); nil when nothing is there.
    public static func isDirectory(_ path: String) -> Bool? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// `directory/name`, as NSString.appendingPathComponent joins them.
    public static func path(_ directory: String, _ name: String) -> String {
        if directory.isEmpty { return name }
        if name.isEmpty { return directory }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}

/// The C library's write(2), which PlainIO.write's own name hides inside PlainIO.
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}

extension StringProtocol {
    /// Without leading and trailing white space and newlines: Foundation's
    /// `trimmingCharacters(in: .whitespacesAndNewlines)` (space separators, tab,
    /// U+000A-U+000D, U+0085, U+2028, U+2029), on Unicode scalars as it does.
    public var trimmedWhitespace: String { trimmed { $0.isSpace || $0.isNewline } }

    /// Without leading and trailing spaces and tabs: Foundation's
    /// `trimmingCharacters(in: .whitespaces)` (space separators and tab).
    public var trimmedSpaces: String { trimmed { $0.isSpace } }

    /// Without leading and trailing NUL bytes, white space and newlines (a device-tree
    /// string ends in NUL): `trimmingCharacters(in: CharacterSet(charactersIn: "\u{0}")
    /// .union(.whitespacesAndNewlines))`.
    public var trimmedWhitespaceAndNUL: String { trimmed { $0.value == 0 || $0.isSpace || $0.isNewline } }

    private func trimmed(_ drop: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !drop($0) }),
              let last = scalars.lastIndex(where: { !drop($0) }) else { return "" }
        var kept = String.UnicodeScalarView()
        kept.append(contentsOf: scalars[first...last])
        return String(kept)
    }
}

private extension Unicode.Scalar {
    var isSpace: Bool { self == "\t" || properties.generalCategory == .spaceSeparator }
    var isNewline: Bool {
        (0x0A...0x0D).contains(value) || value == 0x85 || value == 0x2028 || value == 0x2029
    }
}

/// NSString's path calls on a String (`lastPathComponent`, `deletingLastPathComponent`,
/// `pathExtension`), as Foundation computes them for the absolute and relative POSIX paths
/// the service handles (tested against NSString), without Foundation.
extension PlainIO {
    /// The path without trailing slashes ("/" stays "/").
    private static func trimmingTrailingSlashes(_ path: String) -> Substring {
        var s = Substring(path)
        while s.count > 1 && s.hasSuffix("/") { s = s.dropLast() }
        return s
    }

    /// The last component: "/a/b/" → "b", "/" → "/", "" → "".
    public static func lastComponent(_ path: String) -> String {
        let s = trimmingTrailingSlashes(path)
        if s == "/" { return "/" }
        if let slash = s.lastIndex(of: "/") { return String(s[s.index(after: slash)...]) }
        return String(s)
    }

    /// The path without its last component: "/a/b" → "/a", "/a" → "/", "a" → "", "/" → "/".
    public static func deletingLastComponent(_ path: String) -> String {
        let s = trimmingTrailingSlashes(path)
        if s == "/" { return "/" }
        guard let slash = s.lastIndex(of: "/") else { return "" }
        var head = s[..<slash]
        while head.hasSuffix("/") { head = head.dropLast() }
        return head.isEmpty ? "/" : String(head)
    }

    /// The path without its last component's extension, slashes as NSString leaves them
    /// (doubled ones collapsed, a trailing one dropped): "/x/y.tar.gz" → "/x/y.tar", "a." → "a".
    public static func deletingPathExtension(_ path: String) -> String {
        var s = ""
        for c in path where !(c == "/" && s.hasSuffix("/")) { s.append(c) }
        if s.count > 1 && s.hasSuffix("/") { s.removeLast() }
        let nameStart = s.lastIndex(of: "/").map { s.index(after: $0) } ?? s.startIndex
        guard let dot = s[nameStart...].lastIndex(of: "."), dot != nameStart, s[nameStart...] != ".." else { return s }
        return String(s[..<dot])
    }

    /// The last component's extension without the dot: "a/b.tar.gz" → "gz", "a/.b" → "", "a." → "".
    public static func pathExtension(_ path: String) -> String {
        let name = lastComponent(path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex, name != ".." else { return "" }
        return String(name[name.index(after: dot)...])
    }
}

extension PlainIO {
    /// The size in bytes of what is at the path (lstat: a symlink's own, as
    /// FileManager.attributesOfItem's .size), nil when nothing is there. FoundationEssentials'
    /// attributes hold a UInt there, which `as? Int` (full Foundation's NSNumber) misses.
    public static func fileSize(_ path: String) -> Int? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return Int(st.st_size)
    }

    /// Whether something is at the path (following symlinks), as FileManager.fileExists.
    public static func fileExists(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0
    }

    /// The process's environment, as ProcessInfo.environment gives it (the first of a
    /// repeated name wins; an entry without "=" is left out).
    public static var environment: [String: String] {
        var out: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "="), out[String(s[..<eq])] == nil {
                out[String(s[..<eq])] = String(s[s.index(after: eq)...])
            }
            p += 1
        }
        return out
    }

    /// The absolute path with symlinks resolved (realpath(3)), as URL's
    /// resolvingSymlinksInPath; a path that does not exist comes back absolute, as given.
    public static func resolvedPath(_ path: String) -> String {
        var absolute = path
        if !path.hasPrefix("/") {
            var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            if getcwd(&buf, buf.count) != nil {
                absolute = self.path(String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), path)
            }
        }
        guard let real = realpath(absolute, nil) else { return absolute }
        defer { free(real) }
        return String(cString: real)
    }

    /// A directory's entry names (without "." and ".."), unsorted; nil when it cannot be read.
    public static func directoryEntries(_ path: String) -> [String]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
