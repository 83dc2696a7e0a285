// SPDX-License-Identifier: BSD-2-Clause
/// A failure a role reports to the capture state machine: a small code (which
/// decides the next state and the LED code) and a message that says what to do.
public typealias CaptureError = CodedError<CaptureErrorCode>

public enum CaptureErrorCode: String, ErrorCode, CaseIterable {
    /// The camera failed or did not answer (still capture, stream start).
    case camera
    /// No space left for the file.
    case storageFull
    /// A write, fsync or rename failed for another reason.
    case storageError
    /// The video/audio encoder or muxer failed.
    case encoder
}

extension CaptureError {
    /// The code the status LED blinks for this error.
    public var ledCode: LEDErrorCode {
        switch code {
        case .camera: return .noCamera
        case .storageFull: return .storageFull
        case .storageError: return .storageError
        case .encoder: return .encoderError
        }
    }

    /// Storage errors latch a fault (the next capture would fail the same way
    /// until storage is restored); camera and encoder errors are shown and the
    /// next press simply tries again (the watchdog handles a dead camera).
    public var latchedFault: CaptureFault? {
        switch code {
        case .storageFull: return .storageFull
        case .storageError: return .storageError
        case .camera, .encoder: return nil
        }
    }
}

/// A condition reported by the roles or the watchdog, independent of any one
/// capture.
public enum CaptureFault: String, Sendable, Hashable, CaseIterable {
    /// The camera is gone or stalled; cleared by `cameraRestored`.
    case cameraLost
    /// Cleared by `storageRestored`.
    case storageFull
    /// Cleared by `storageRestored`.
    case storageError
    /// The encoder failed during a recording: the clip is stopped and kept;
    /// not latched (the next recording tries again).
    case encoderError

    public var ledCode: LEDErrorCode {
        switch self {
        case .cameraLost: return .noCamera
        case .storageFull: return .storageFull
        case .storageError: return .storageError
        case .encoderError: return .encoderError
        }
    }

    /// Latched faults make the machine refuse captures until they clear.
    public var isLatched: Bool { self != .encoderError }
}
