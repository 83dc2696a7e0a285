// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif

/// The process's open-file limit. systemd starts services with a soft limit of 1024 and a
/// hard limit far above; descriptors are what a clip, the card and every network peer
/// share, so shutterd takes the hard limit (up to `ceiling`) at start, as systemd advises
/// programs that need more (systemd.exec, LimitNOFILE). Nothing here uses select(2).
enum OpenFileLimit {
    static let ceiling: rlim_t = 65536

    /// Raises the soft limit; (before, after).
    @discardableResult
    static func raise() -> (before: UInt64, after: UInt64) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (0, 0) }
        let before = limit.rlim_cur
        let wanted = min(limit.rlim_max, ceiling)
        guard wanted > before else { return (UInt64(before), UInt64(before)) }
        limit.rlim_cur = wanted
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (UInt64(before), UInt64(before)) }
        return (UInt64(before), UInt64(wanted))
    }
}
