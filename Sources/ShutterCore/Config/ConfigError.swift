// SPDX-License-Identifier: BSD-2-Clause
/// A configuration that cannot be used. The service exits with `exitCode`
/// (78, EX_CONFIG: systemd then does not restart-loop on it) after printing
/// `description`, which names the key path, where it came from and what is allowed.
public struct ConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// A key the schema does not know (a typo, usually; the message suggests one).
        case unknownKey
        /// A value of the wrong JSON type (a string where a number belongs...).
        case wrongType
        /// A number outside its range.
        case outOfRange
        /// A value that is not one of the allowed choices.
        case notAllowed
        /// The file is not valid JSON.
        case invalidJSON
        /// The named file does not exist.
        case fileMissing
        /// The file exists but cannot be read.
        case fileUnreadable
        /// No `boards/NAME.json` in any board directory.
        case boardNotFound
    }

    public var code: Code
    /// The dotted key path ("button.holdMs"), when one key is at fault.
    public var keyPath: String?
    /// Where the value came from: "/etc/shutter/shutter.json line 4",
    /// "board file boards/rpi5.json", "command line".
    public var source: String
    /// What is wrong and what is allowed.
    public var message: String

    public init(_ code: Code, keyPath: String? = nil, source: String, message: String) {
        self.code = code
        self.keyPath = keyPath
        self.source = source
        self.message = message
    }

    /// EX_CONFIG from sysexits.h.
    public static let exitCode: Int32 = 78
    public var exitCode: Int32 { Self.exitCode }

    public var description: String { "configuration error in \(source): \(message)" }
}
