// SPDX-License-Identifier: BSD-2-Clause
/// The capture state machine's state as the service (STATUS=, control socket)
/// and the tests see it.
public enum CaptureState: Equatable, Sendable {
    case booting
    case idle
    /// Half-pressed: AF running, frames kept; a tap makes a photo, a hold a clip.
    case pressed(at: MonotonicTime)
    /// A still is being taken and saved.
    case takingPhoto(pressedAt: MonotonicTime)
    case recording(from: MonotonicTime)
    /// A clip is being finalised.
    case finalising
    case cameraUnavailable
    case storageUnavailable(LEDErrorCode)
    case shutdownCountdown(deadline: MonotonicTime)
    /// Shutdown requested: finishing the captures in flight, then power off.
    case shuttingDown
    case poweredOff
}

/// A capture under way (`CaptureStateMachine.inProgress`).
public struct CaptureInProgress: Equatable, Sendable {
    public enum Activity: Equatable, Sendable {
        /// A tap's photo, of the press moment (written from memory) or focused (taken now).
        case photo(StillMoment)
        /// A photo during a recording, from the video.
        case videoSnapshot
        case recording
        case finalising
    }

    public var id: CaptureID
    public var activity: Activity

    public init(id: CaptureID, activity: Activity) {
        self.id = id
        self.activity = activity
    }
}
