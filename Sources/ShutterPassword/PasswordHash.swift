import CShutterPassword
import Foundation

/// Argon2id password hashes (libsodium, INTERACTIVE cost: 64 MiB and ~1 s on a
/// small Pi). Verification commits that memory, so only one runs at a time.
public enum PasswordHash {
    private static let oneAtATime = NSLock()

    public static func ready() -> Bool { shutter_web_crypto_init() == 0 }

    /// The hash to put in `web.passwordHash`.
    public static func make(_ password: String) -> String? {
        guard ready() else { return nil }
        var out = [CChar](repeating: 0, count: 128)
        let ok = password.withCString { shutter_web_hash_password($0, strlen($0), &out) } == 0
        // Up to the NUL (String(cString:) on arrays is deprecated).
        return ok ? String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
    }

    public static func verify(_ password: String, against hash: String) -> Bool {
        oneAtATime.lock()
        defer { oneAtATime.unlock() }
        return password.withCString { shutter_web_verify_password(hash, $0, strlen($0)) } == 0
    }

    public static func isValid(_ hash: String) -> Bool {
        ready() && shutter_web_hash_is_valid(hash) == 1
    }
}
