// SPDX-License-Identifier: BSD-2-Clause
import CShutterWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import Synchronization

/// Logged-in browsers: a 32-byte random id in an HttpOnly, SameSite=Strict cookie,
/// and per session a CSRF token the page sends back in `X-CSRF-Token` with every
/// POST and DELETE. Kept in memory only (a restart logs everyone out), bounded,
/// and dropped after a day unused.
public final class WebSessions: Sendable {
    public static let cookieName = "shutter_session"
    public static let idleSeconds = 24 * 3600.0
    public static let maxSessions = 64

    public struct Session: Sendable, Equatable {
        public var csrf: String
        var lastUsed: Double
    }

    private let sessions = Mutex([String: Session]())
    private let now: @Sendable () -> Double

    public init(now: @escaping @Sendable () -> Double = { ProcessInfo.processInfo.systemUptime }) {
        self.now = now
    }

    /// A new session: (cookie value, CSRF token).
    public func create() -> (id: String, csrf: String) {
        let id = Self.token(), csrf = Self.token()
        let t = now()
        sessions.withLock { s in
            s = s.filter { t - $0.value.lastUsed < Self.idleSeconds }
            if s.count >= Self.maxSessions, let oldest = s.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
                s.removeValue(forKey: oldest.key)
            }
            s[id] = Session(csrf: csrf, lastUsed: t)
        }
        return (id, csrf)
    }

    /// The session named by a `Cookie` header, touched; nil when none is valid.
    public func session(cookieHeader: String?) -> (id: String, session: Session)? {
        guard let id = Self.cookieValue(cookieHeader) else { return nil }
        let t = now()
        return sessions.withLock { s in
            guard let key = s.keys.first(where: { Self.sameBytes($0, id) }), var session = s[key] else { return nil }
            guard t - session.lastUsed < Self.idleSeconds else { s.removeValue(forKey: key); return nil }
            session.lastUsed = t
            s[key] = session
            return (key, session)
        }
    }

    public func end(_ id: String) { _ = sessions.withLock { $0.removeValue(forKey: id) } }

    static func cookieValue(_ header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let kv = part.trimmedSpaces
            if kv.hasPrefix(cookieName + "=") {
                let v = String(kv.dropFirst(cookieName.count + 1))
                return v.isEmpty ? nil : v
            }
        }
        return nil
    }

    /// Constant-time byte equality for secrets (session ids, CSRF tokens): their UTF-8
    /// bytes, not Swift's `==`, which takes U+212A KELVIN SIGN for "K" and is not constant-time.
    static func sameBytes(_ a: String, _ b: String) -> Bool {
        let a = Array(a.utf8), b = Array(b.utf8)
        return a.withUnsafeBytes { pa in
            b.withUnsafeBytes { pb in shutter_web_equal_bytes(pa.baseAddress, pa.count, pb.baseAddress, pb.count) == 1 }
        }
    }

    /// 32 random bytes, URL-safe base64 (43 characters).
    static func token() -> String {
        var buf = [CChar](repeating: 0, count: 64)
        shutter_web_random_token(32, &buf, buf.count)
        return cString(buf)
    }
}
