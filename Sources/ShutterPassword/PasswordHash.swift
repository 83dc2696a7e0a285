// SPDX-License-Identifier: BSD-2-Clause
import CShutterPassword
import Synchronization

/// Argon2id password hashes (libsodium, INTERACTIVE cost: 64 MiB and ~1 s on a
/// small Pi). Verification commits that memory, so only one runs at a time.
public enum PasswordHash {
    private static let oneAtATime = Mutex(())

    public static func ready() -> Bool { shutter_web_crypto_init() == 0 }

    /// Why a new password cannot be used, or nil. A NUL would end it in any C
    /// string on the way (a terminal, a config tool), so it is refused outright.
    public static func refusal(forNew password: String) -> String? {
        password.utf8.contains(0) ? "a web password cannot contain a NUL character" : nil
    }

    /// The hash to put in `web.passwordHash`; nil when `refusal(forNew:)` has a reason.
    public static func make(_ password: String) -> String? {
        guard ready(), refusal(forNew: password) == nil else { return nil }
        var out = [CChar](repeating: 0, count: 128)
        let ok = withBytes(password) { shutter_web_hash_password($0, $1, &out) } == 0
        // Up to the NUL (String(cString:) on arrays is deprecated).
        return ok ? String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
    }

    public static func verify(_ password: String, against hash: String) -> Bool {
        oneAtATime.withLock { _ in
            withBytes(password) { shutter_web_verify_password(hash, $0, $1) } == 0
        }
    }

    /// The password's UTF-8 bytes and their count: all of them reach libsodium (not `strlen`'s).
    private static func withBytes<R>(_ password: String, _ body: (UnsafePointer<CChar>, Int) -> R) -> R {
        let bytes = Array(password.utf8).map { CChar(bitPattern: $0) } + [0]
        return bytes.withUnsafeBufferPointer { body($0.baseAddress!, $0.count - 1) }
    }

    public static func isValid(_ hash: String) -> Bool {
        ready() && shutter_web_hash_is_valid(hash) == 1
    }
}
