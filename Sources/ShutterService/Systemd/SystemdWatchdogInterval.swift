// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif

/// The service watchdog systemd arms from `WatchdogSec=`: it passes the timeout in
/// $WATCHDOG_USEC and, for services that fork, the PID it is meant for in $WATCHDOG_PID.
public enum SystemdWatchdogInterval {
    /// The timeout, or nil when systemd set no watchdog for this process.
    /// Throws when the variables are set but malformed.
    public static func fromEnvironment(_ environment: [String: String],
                                       pid: Int32 = getpid()) throws(SystemdNotifyError) -> Duration? {
        guard let usecText = environment["WATCHDOG_USEC"] else { return nil }
        if let pidText = environment["WATCHDOG_PID"] {
            guard let target = Int32(pidText), target > 0 else {
                throw SystemdNotifyError(.invalidWatchdog, "WATCHDOG_PID \"\(pidText)\" is not a process id")
            }
            // Meant for another process (a parent that exec'd us without clearing it).
            if target != pid { return nil }
        }
        guard let usec = UInt64(usecText), usec > 0, usec <= UInt64(Int64.max / 1000) else {
            throw SystemdNotifyError(.invalidWatchdog, "WATCHDOG_USEC \"\(usecText)\" is not a positive number of microseconds")
        }
        return .microseconds(Int64(usec))
    }

    /// How often to send WATCHDOG=1: half the timeout, as sd_watchdog_enabled(3) advises,
    /// so one late ping never trips it.
    public static func pingInterval(for timeout: Duration) -> Duration {
        timeout / 2
    }
}
