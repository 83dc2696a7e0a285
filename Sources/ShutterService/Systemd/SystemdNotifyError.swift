// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// Why a notification to systemd could not be sent. The service logs `message`
/// and carries on: a missed WATCHDOG=1 is covered by the next ping. `errno`:
/// the failed system call's, when there was one.
public typealias SystemdNotifyError = CodedError<SystemdNotifyErrorCode>

public enum SystemdNotifyErrorCode: String, ErrorCode {
    public static let subject: String? = "systemd notify"
    /// $NOTIFY_SOCKET is not an absolute path or an '@' abstract name, or is too long.
    case invalidAddress
    /// $WATCHDOG_USEC or $WATCHDOG_PID is not a positive number.
    case invalidWatchdog
    /// socket(AF_UNIX, SOCK_DGRAM) failed.
    case socketFailed
    /// sendmsg() to the notify socket failed (nobody listening, queue full...).
    case sendFailed
}
