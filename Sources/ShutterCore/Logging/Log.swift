// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Log lines to stderr with `<N>` syslog priority prefixes, so journald keeps
/// the levels (`SyslogLevelPrefix=` is on by default for services). One label
/// per subsystem (`shutter.camera`).
public struct Log: Sendable {
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case error = 3, warning = 4, notice = 5, info = 6, debug = 7

        public init?(name: String) {
            switch name.lowercased() {
            case "error", "err": self = .error
            case "warning", "warn": self = .warning
            case "notice": self = .notice
            case "info": self = .info
            case "debug": self = .debug
            default: return nil
            }
        }

        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
    }

    private static let threshold = Atomic<Int>(Level.info.rawValue)
    /// Serialises writes so lines from different threads never interleave.
    private static let lock = Mutex(())

    public static var level: Level {
        get { Level(rawValue: threshold.load(ordering: .relaxed)) ?? .info }
        set { threshold.store(newValue.rawValue, ordering: .relaxed) }
    }

    private static let clearsStatusLine = Atomic<Bool>(false)

    /// Set while a terminal status line is drawn: each log line first clears it
    /// (the status line is redrawn below within 100 ms).
    public static var terminalStatusLine: Bool {
        get { clearsStatusLine.load(ordering: .relaxed) }
        set { clearsStatusLine.store(newValue, ordering: .relaxed) }
    }

    public let label: String

    public init(_ label: String) { self.label = label }

    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        guard level.rawValue <= Self.threshold.load(ordering: .relaxed) else { return }
        let clear = Self.clearsStatusLine.load(ordering: .relaxed) ? "\r\u{1B}[2K" : ""
        let line = "\(clear)<\(level.rawValue)>\(label): \(message())\n"
        Self.lock.withLock { _ in
            var bytes = Array(line.utf8)
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress! + offset, $0.count - offset) }
                if n <= 0 { if n < 0 && errno == EINTR { continue }; break }
                offset += n
            }
        }
    }

    public func error(_ m: @autoclosure () -> String) { log(.error, m()) }
    public func warning(_ m: @autoclosure () -> String) { log(.warning, m()) }
    public func notice(_ m: @autoclosure () -> String) { log(.notice, m()) }
    public func info(_ m: @autoclosure () -> String) { log(.info, m()) }
    public func debug(_ m: @autoclosure () -> String) { log(.debug, m()) }
}
