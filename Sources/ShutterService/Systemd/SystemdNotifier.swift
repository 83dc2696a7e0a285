// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore
import ShutterStorage

/// Sends sd_notify(3) datagrams to $NOTIFY_SOCKET without libsystemd: READY=1,
/// STATUS=, WATCHDOG=1, STOPPING=1, EXTEND_TIMEOUT_USEC=. One non-blocking
/// AF_UNIX datagram socket, made once; the kernel attaches our credentials, which
/// systemd checks against the main PID (`NotifyAccess=main`).
/// Thread-safe: every method is one sendmsg() on an immutable fd.
public final class SystemdNotifier: Sendable {
    public let address: NotifySocketAddress
    /// The systemd watchdog timeout (`WatchdogSec=`), nil when none is armed.
    public let watchdogTimeout: Duration?
    private let fd: Int32

    /// The notifier systemd asked for, or nil when $NOTIFY_SOCKET is unset (not run
    /// by systemd, or not `Type=notify`). Throws when the variables are malformed.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(SystemdNotifyError) -> SystemdNotifier? {
        guard let text = environment["NOTIFY_SOCKET"], !text.isEmpty else { return nil }
        return try SystemdNotifier(address: NotifySocketAddress(text),
                                   watchdogTimeout: SystemdWatchdogInterval.fromEnvironment(environment))
    }

    public init(address: NotifySocketAddress, watchdogTimeout: Duration? = nil) throws(SystemdNotifyError) {
        // Non-blocking: a busy systemd must never stall the caller; a lost ping is
        // covered by the next one (sent at half the timeout).
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else {
            let error = SystemError(errno: errno, call: "socket")
            throw SystemdNotifyError(.socketFailed, "cannot create the notify socket (\(error)); "
                                        + "check RestrictAddressFamilies= allows AF_UNIX", errno: error.errno)
        }
        self.fd = fd
        self.address = address
        self.watchdogTimeout = watchdogTimeout
    }

    deinit {
        close(fd)
    }

    /// How often to send `watchdog()`: half of `watchdogTimeout`; nil when no watchdog is armed.
    public var watchdogInterval: Duration? {
        watchdogTimeout.map(SystemdWatchdogInterval.pingInterval(for:))
    }

    /// Startup is complete; `systemctl start` returns now. `status` is shown by `systemctl status`.
    public func ready(status: String? = nil) throws(SystemdNotifyError) {
        try send(["READY=1"] + (status.map { ["STATUS=" + Self.oneLine($0)] } ?? []))
    }

    /// A line a person reads in `systemctl status` ("ready, 12 photos, 3 clips, 14.2 GB free").
    public func status(_ text: String) throws(SystemdNotifyError) {
        try send(["STATUS=" + Self.oneLine(text)])
    }

    /// Keep-alive: send at `watchdogInterval` while healthy (frames arrive, storage writable).
    public func watchdog() throws(SystemdNotifyError) {
        try send(["WATCHDOG=1"])
    }

    /// Tells systemd the service is wedged now: it acts as on a watchdog timeout
    /// (SIGABRT, then `Restart=on-failure`) without waiting for the timeout.
    public func watchdogTrigger() throws(SystemdNotifyError) {
        try send(["WATCHDOG=trigger"])
    }

    /// Shutdown has begun (a clip may still be finalising).
    public func stopping(status: String? = nil) throws(SystemdNotifyError) {
        try send(["STOPPING=1"] + (status.map { ["STATUS=" + Self.oneLine($0)] } ?? []))
    }

    /// Asks for `usec` more microseconds before the start/stop timeout fires (a long
    /// camera warm-up, a big clip finalising).
    public func extendTimeout(usec: UInt64) throws(SystemdNotifyError) {
        try send(["EXTEND_TIMEOUT_USEC=\(usec)"])
    }

    /// Sends one datagram of newline-separated assignments, each "KEY=value".
    public func send(_ assignments: [String]) throws(SystemdNotifyError) {
        let payload = Array(assignments.joined(separator: "\n").utf8)
        let sent: Int = address.withSockaddr { sockaddrPointer, length in
            payload.withUnsafeBytes { bytes in
                var io = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count)
                return withUnsafeMutablePointer(to: &io) { ioPointer in
                    var message = msghdr()
                    message.msg_name = UnsafeMutableRawPointer(mutating: sockaddrPointer)
                    message.msg_namelen = length
                    message.msg_iov = ioPointer
                    message.msg_iovlen = 1
                    while true {
                        let n = sendmsg(fd, &message, Int32(MSG_NOSIGNAL))
                        if n >= 0 || errno != EINTR { return n }
                    }
                }
            }
        }
        guard sent == payload.count else {
            let error = SystemError(errno: sent < 0 ? errno : EMSGSIZE, call: "sendmsg", path: address.text)
            throw SystemdNotifyError(.sendFailed, "cannot notify systemd at \(address.text) (\(error))", errno: error.errno)
        }
    }

    /// A newline would end the assignment and start another (a STATUS text could
    /// otherwise say READY=1): fold line breaks into spaces.
    static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }
}
