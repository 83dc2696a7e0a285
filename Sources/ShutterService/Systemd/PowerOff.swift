// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// Asks the system to power off: the last step of the shutdown gesture, after the
/// clip is finalised and the files are synced. Real: `SystemctlPowerOff` (logind,
/// allowed by a polkit rule for the service user). Tests: `RecordingPowerOff` (in the test target).
public protocol PowerOff: Sendable {
    /// Returns once the request was accepted (the system then stops the service
    /// with SIGTERM as part of the shutdown); throws when it was refused.
    func powerOff() async throws(PowerOffError)
}

/// Why the system would not power off. The service shows an error pattern and stays up.
public typealias PowerOffError = CodedError<PowerOffErrorCode>

public enum PowerOffErrorCode: String, ErrorCode {
    public static let subject: String? = "power-off"
    /// The service runs as root; power-off is only ever asked for as the service user.
    case runningAsRoot
    /// The power-off command could not be started.
    case spawnFailed
    /// The command ran and said no (polkit denied it, an inhibitor blocks it...).
    case refused
}
