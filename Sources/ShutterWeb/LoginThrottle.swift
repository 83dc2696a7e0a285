// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Failed logins slow down per client address: after the n-th wrong password in a
/// row that address may try again only after 2^(n-1) s (1, 2, 4 … 300 s); an
/// attempt before then is refused without checking the password. A right password
/// clears the address. The table is bounded: the stalest entries go first.
public final class LoginThrottle: Sendable {
    public static let maxDelaySeconds = 300.0
    public static let maxEntries = 4096

    private struct Entry { var failures: Int; var notBefore: Double }
    private let table = Mutex([String: Entry]())
    private let now: @Sendable () -> Double

    public init(now: @escaping @Sendable () -> Double = { ProcessInfo.processInfo.systemUptime }) {
        self.now = now
    }

    /// Seconds this address must still wait before its next attempt; 0 = it may try now.
    public func wait(for client: String) -> Double {
        let t = now()
        return table.withLock { max(0, ($0[client]?.notBefore ?? 0) - t) }
    }

    /// Records a wrong password; returns the delay now imposed on the address.
    @discardableResult
    public func failed(_ client: String) -> Double {
        let t = now()
        return table.withLock { table in
            var e = table[client] ?? Entry(failures: 0, notBefore: 0)
            e.failures += 1
            let delay = min(Self.maxDelaySeconds, pow(2, Double(min(e.failures - 1, 20))))
            e.notBefore = t + delay
            table[client] = e
            if table.count > Self.maxEntries, let stalest = table.min(by: { $0.value.notBefore < $1.value.notBefore }) {
                table.removeValue(forKey: stalest.key)
            }
            return delay
        }
    }

    public func succeeded(_ client: String) {
        _ = table.withLock { $0.removeValue(forKey: client) }
    }
}
