// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import CShutterWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import ShutterCore
import ShutterStorage
import Synchronization

/// API tokens for machines (Home Assistant, scripts): a name, a scope, and the
/// SHA-256 of a 32-byte random token, in `<root>/.shutter-web-tokens.json` beside the
/// runtime settings (mode 0600, written like them: temp, fsync, rename, directory
/// fsync). The token itself is shown once, by `add`, and never stored. The service
/// owns this store: `shutterctl web-token` reaches it through the control socket, so a
/// revocation applies to the next request, without a restart.
public final class WebTokens: Sendable {
    public enum Scope: String, Sendable, CaseIterable {
        /// Reads: status, files, thumbnails, the preview, the snapshot, events.
        case view
        /// Also what changes something: photos, recordings, settings, deletions.
        case control
    }

    public struct Info: Sendable, Equatable {
        public var name: String
        public var scope: Scope
        /// Wall-clock Unix seconds (the Pi may have no RTC: as trustworthy as its clock).
        public var created: Double
        public var lastUsed: Double?
    }

    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    public static let fileName = ".shutter-web-tokens.json"
    public static let maxTokens = 32
    public static let maxNameLength = 64
    /// "last used" reaches the file at most this often: a client polling a snapshot
    /// every few seconds must not cost an fsync on the card per request (wear, and a
    /// slow write in the request's path). Add, revoke and the service's stop write at once;
    /// a crash loses at most this much of "last used", which is for people only.
    public static let lastUsedWriteSeconds = 60.0
    /// Longer than any token we make (43 characters); a longer one is not checked.
    static let maxTokenBytes = 256

    private struct Entry: Codable {
        var name: String
        var scope: String
        var sha256: String
        var created: Double
        var lastUsed: Double?
    }
    private struct Contents: Codable {
        var version = 1
        var tokens: [Entry]
    }
    private struct State {
        var entries: [Entry] = []
        var digests: [[UInt8]] = []  // entries' sha256 as bytes, same order
        var dirty = false
        var writeScheduled = false
        var lastWrite: Double
    }

    public let path: String
    private let state: Mutex<State>
    /// One write at a time, each of the state as it is when it starts: a later write
    /// never loses to an earlier one.
    private let writeLock = PlainLock()
    private let writer = DispatchQueue(label: "shutter.web.tokens", qos: .utility)
    private let wallClock: @Sendable () -> Double
    private let uptime: @Sendable () -> Double
    private let log = Log("shutter.web")

    /// Loads the file under `root` (none: no tokens). A file that cannot be read as
    /// tokens is moved aside (`.corrupt`) and logged: no token is accepted from it.
    public init(root: String, wallClock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
                uptime: @escaping @Sendable () -> Double = { ProcessInfo.processInfo.systemUptime }) {
        path = PlainIO.path(root, Self.fileName)
        self.wallClock = wallClock
        self.uptime = uptime
        var s = State(lastWrite: uptime())
        do {
            if let bytes = try AtomicFile.read(path, limit: 1_048_576) {
                let contents = try JSONDecoder().decode(Contents.self, from: Data(bytes))
                for e in contents.tokens {
                    guard Scope(rawValue: e.scope) != nil, let d = Self.bytes(hex: e.sha256), d.count == 32 else {
                        throw Refusal(message: "token \"\(e.name)\" has an unknown scope or a malformed digest")
                    }
                    s.entries.append(e)
                    s.digests.append(d)
                }
            }
        } catch {
            let aside = path + ".corrupt"
            rename(path, aside)
            log.error("\(path) cannot be read as API tokens (\(error)); moved to \(aside): no API token works until new ones are added")
            s = State(lastWrite: uptime())
        }
        state = Mutex(s)
    }

    /// A new token: (the token, shown once; its entry). Written before it is returned.
    public func add(name: String, scope: String) throws(Refusal) -> (token: String, info: Info) {
        try Self.check(name: name)
        guard let sc = Scope(rawValue: scope) else {
            throw Refusal(message: "scope \"\(scope)\" is not one: view (reads: status, files, preview, snapshot, events) "
                          + "or control (also photos, recordings, settings, deletions)")
        }
        let token = WebSessions.token()
        let digest = Self.digest(Array(token.utf8))
        let entry = Entry(name: name, scope: sc.rawValue, sha256: Self.hex(digest), created: wallClock(), lastUsed: nil)
        try state.withLock { s throws(Refusal) in
            guard !s.entries.contains(where: { $0.name == name }) else {
                throw Refusal(message: "a token named \"\(name)\" exists; revoke it first (shutterctl web-token revoke \(name))")
            }
            guard s.entries.count < Self.maxTokens else {
                throw Refusal(message: "\(Self.maxTokens) tokens exist already; revoke one first")
            }
            s.entries.append(entry)
            s.digests.append(digest)
        }
        do {
            try write()
        } catch {
            // Nobody has the token yet: forget it, so the file and the service agree.
            state.withLock { s in
                if let i = s.entries.firstIndex(where: { $0.name == name }) {
                    s.entries.remove(at: i)
                    s.digests.remove(at: i)
                }
            }
            throw Refusal(message: "could not write \(path): \(error); no token was added")
        }
        log.notice("API token \"\(name)\" (\(sc.rawValue)) added")
        return (token, Self.info(entry))
    }

    /// Every token, oldest first.
    public func list() -> [Info] { state.withLock { $0.entries.map(Self.info) } }

    /// Removes the token at once (the next request with it is refused), then from the file.
    @discardableResult
    public func revoke(name: String) throws(Refusal) -> Info {
        let removed = state.withLock { s -> Entry? in
            guard let i = s.entries.firstIndex(where: { $0.name == name }) else { return nil }
            s.digests.remove(at: i)
            return s.entries.remove(at: i)
        }
        guard let removed else {
            let names = list().map(\.name)
            throw Refusal(message: "no token named \"\(name)\"" + (names.isEmpty ? " (there are none)" : " (there are: \(names.joined(separator: ", ")))"))
        }
        log.notice("API token \"\(name)\" revoked")
        do {
            try write()
        } catch {
            throw Refusal(message: "token \"\(name)\" is revoked in the running service, but \(path) could not be written (\(error)): "
                          + "it would work again after a restart; fix the file system and revoke it again")
        }
        return Self.info(removed)
    }

    /// The scope of a presented token; nil when it is not one of ours (wrong or revoked).
    /// Notes its use in memory; the file gets it later (`lastUsedWriteSeconds`).
    public func scope(of token: String) -> Scope? {
        let bytes = Array(token.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maxTokenBytes else { return nil }
        let digest = Self.digest(bytes)
        let now = wallClock(), up = uptime()
        let (scope, writeIn) = state.withLock { s -> (Scope?, Double?) in
            // Every entry compared, in constant time each: which one matched shows in no timing.
            var found: Int?
            for (i, d) in s.digests.enumerated() where Self.same(d, digest) { found = i }
            guard let i = found else { return (nil, nil) }
            s.entries[i].lastUsed = now
            s.dirty = true
            guard !s.writeScheduled else { return (Scope(rawValue: s.entries[i].scope), nil) }
            s.writeScheduled = true
            return (Scope(rawValue: s.entries[i].scope), max(0, s.lastWrite + Self.lastUsedWriteSeconds - up))
        }
        if let writeIn {
            writer.asyncAfter(deadline: .now() + writeIn) { [self] in
                state.withLock { $0.writeScheduled = false }
                do { try write(onlyIfDirty: true) } catch { log.warning("API tokens' last use not saved: \(error)") }
            }
        }
        return scope
    }

    /// Writes what changed in memory ("last used"); the service calls it as it stops.
    public func flush() {
        do { try write(onlyIfDirty: true) } catch { log.warning("API tokens' last use not saved: \(error)") }
    }

    private func write(onlyIfDirty: Bool = false) throws(SystemError) {
        writeLock.lock()
        defer { writeLock.unlock() }
        let entries = state.withLock { s -> [Entry]? in
            if onlyIfDirty && !s.dirty { return nil }
            s.dirty = false
            s.lastWrite = uptime()
            return s.entries
        }
        guard let entries else { return }
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data = (try? e.encode(Contents(tokens: entries))) ?? Data()
        do {
            try data.withUnsafeBytes { bytes in
                try AtomicFile.write(to: path, placement: .replacing) { fd in
                    // Digests, not tokens; still nobody else's business (the card may be read elsewhere).
                    _ = fchmod(fd, 0o600)
                    try AtomicFile.writeAll(fd: fd, bytes: bytes, path: path)
                }
            }
        } catch {
            state.withLock { $0.dirty = true }
            throw (error as? SystemError) ?? SystemError(errno: EIO, call: "write", path: path)
        }
    }

    static func check(name: String) throws(Refusal) {
        let allowed = name.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2E || c == 0x5F || c == 0x2D
        }
        guard !name.isEmpty, name.utf8.count <= maxNameLength, allowed, !name.hasPrefix("-") else {
            throw Refusal(message: "a token's name is 1 to \(maxNameLength) letters, digits, '.', '_' or '-', "
                          + "not starting with '-' (e.g. home-assistant)")
        }
    }

    private static func info(_ e: Entry) -> Info {
        Info(name: e.name, scope: Scope(rawValue: e.scope) ?? .view, created: e.created, lastUsed: e.lastUsed)
    }

    /// A secret's digest, for remembering one without keeping it (the RTSP password check).
    public static func fingerprint(_ secret: String) -> [UInt8] { digest(Array(secret.utf8)) }

    static func digest(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        _ = bytes.withUnsafeBytes { b in out.withUnsafeMutableBufferPointer { shutter_web_token_digest(b.baseAddress, b.count, $0.baseAddress) } }
        return out
    }

    private static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in shutter_web_equal_bytes(pa.baseAddress, pa.count, pb.baseAddress, pb.count) == 1 } }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }

    static func bytes(hex: String) -> [UInt8]? {
        let h = Array(hex.utf8)
        guard h.count % 2 == 0 else { return nil }
        func v(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x61...0x66: return c - 0x61 + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        for i in stride(from: 0, to: h.count, by: 2) {
            guard let hi = v(h[i]), let lo = v(h[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
        }
        return out
    }
}
