// SPDX-License-Identifier: BSD-2-Clause
/// Error codes a person can count on the status LED: N short blinks, then a
/// long pause. 1 is not used, so a single stray blink never reads as a code.
public enum LEDErrorCode: Int, Sendable, CaseIterable, Comparable {
    case noCamera = 2
    case storageFull = 3
    case storageError = 4
    case encoderError = 5

    public static func < (a: LEDErrorCode, b: LEDErrorCode) -> Bool { a.rawValue < b.rawValue }

    /// What the person should do, for logs, `STATUS=` and the table in docs/control-and-api.md "The LEDs".
    public var meaning: String {
        switch self {
        case .noCamera: return "no camera: check the ribbon cable; the service keeps retrying"
        case .storageFull: return "storage full: free space or change the card"
        case .storageError: return "storage error: check or replace the card"
        case .encoderError: return "video encoder error: the clip so far is kept; try again"
        }
    }
}
