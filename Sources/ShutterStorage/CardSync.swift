// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Every fsync Shutter makes of a file or folder on the card goes through here, so a test
/// can stand in for a card whose syncs hang (an SD card mid-erase, a dying USB stick):
/// `hold` runs before each sync, on the thread that syncs. Nothing is held in production.
public enum CardSync {
    private static let hook = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Runs `body` before every sync (nil: none); `path` is what is synced.
    public static func hold(_ body: (@Sendable (String) -> Void)?) {
        hook.withLock { $0 = body }
    }

    /// fsync(2) of `fd` (the file or folder `path`), after the test's hold if any.
    public static func fsync(_ fd: Int32, path: String) -> Int32 {
        if let h = hook.withLock({ $0 }) { h(path) }
        return Glibc.fsync(fd)
    }
}
