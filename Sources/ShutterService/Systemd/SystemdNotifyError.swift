// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterStorage

/// Why a notification to systemd could not be sent. The service logs `message`
/// and carries on: a missed WATCHDOG=1 is covered by the next ping.
public struct SystemdNotifyError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// $NOTIFY_SOCKET is not an absolute path or an '@' abstract name, or is too long.
        case invalidAddress
        /// $WATCHDOG_USEC or $WATCHDOG_PID is not a positive number.
        case invalidWatchdog
        /// socket(AF_UNIX, SOCK_DGRAM) failed.
        case socketFailed
        /// sendmsg() to the notify socket failed (nobody listening, queue full...).
        case sendFailed
    }

    public var code: Code
    public var message: String
    /// The failed system call, when there was one.
    public var underlying: SystemError?

    public init(_ code: Code, _ message: String, underlying: SystemError? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String { "systemd notify \(code.rawValue): \(message)" }
}
