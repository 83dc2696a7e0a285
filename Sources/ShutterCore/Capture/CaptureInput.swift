// SPDX-License-Identifier: BSD-2-Clause
/// Everything that drives the capture state machine. Outcomes carry the id of
/// the action they answer, so a late answer (after a timeout) is never taken
/// for the answer to a newer capture.
public enum CaptureInput: Equatable, Sendable {
    /// The service is up (camera, storage): booting → idle.
    case ready
    /// From the button recognizer.
    case gesture(GestureEvent)
    /// From the control socket, signals or the terminal; the id names the request
    /// in the actions that answer it.
    case command(CaptureCommand, RequestID)

    case photoSaved(id: CaptureID, path: String)
    case photoFailed(id: CaptureID, CaptureError)
    case recordingFinalised(id: CaptureID, paths: [String])
    case recordingFailed(id: CaptureID, CaptureError)

    case fault(CaptureFault)
    case cameraRestored
    case storageRestored

    /// The latest metering (any recent frame's metadata), for the auto flash.
    case sceneMetered(FrameMetadata)
    /// `flash.mode` was set while running (`shutterctl set`, a reread config
    /// file): shown on the flash LED, as a double tap's is. The mode itself comes
    /// with every input (`CaptureLights`).
    case flashModeSet(FlashMode)
    /// Time passes: checks the max recording duration and the outcome timeouts.
    /// Send it at `nextDeadline` (sending it more often is harmless).
    case tick
}

public enum CaptureCommand: Equatable, Sendable {
    case photo
    /// Record from now; `stopAfter` ends the clip by itself (a remote hold).
    case recordStart(stopAfter: Duration?)
    case recordStop
}

/// Identifies one capture request (a still, a snapshot or a recording).
public struct CaptureID: Hashable, Sendable, CustomStringConvertible {
    public var value: UInt64
    public init(_ value: UInt64) { self.value = value }
    public var description: String { "#\(value)" }
}
