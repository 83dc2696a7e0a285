// SPDX-License-Identifier: BSD-2-Clause
/// What the service must do after an input, in order.
public enum CaptureAction: Equatable, Sendable {
    /// Half-press: start an AF cycle now (the still waits for it, bounded).
    case startAutofocus
    /// Start encoding a clip from this time on, under a temporary name
    /// (replacing an earlier uncommitted one): the press may become a clip that
    /// starts at the press.
    case startSpeculativeClip(from: MonotonicTime)
    /// The press will not become a clip: stop that encoder and delete its file.
    case discardSpeculativeClip
    /// `still.moment` `press`: this press or request may become a photo: pin the
    /// frame exposed at `at` (and start encoding it). A `takePhoto` with moment
    /// `press` for `origin` uses it; the service lets it go once `origin` is no
    /// longer pending (a hold, a double tap, a refusal).
    case pinPressFrame(origin: CaptureOrigin, at: MonotonicTime)
    /// Save a photo: `press`, the frame pinned for `origin`; `focused`, a
    /// full-resolution still after the autofocus cycle; `flash` = fire the flash
    /// LED around the exposure (always `focused`). Answer with photoSaved/photoFailed(id).
    case takePhoto(id: CaptureID, origin: CaptureOrigin, pressedAt: MonotonicTime, flash: Bool, moment: StillMoment)
    /// A still from the running video stream (a photo asked for during a
    /// recording: the clip must not be cut for a mode switch).
    /// Answer with photoSaved/photoFailed(id).
    case takeVideoSnapshot(id: CaptureID, origin: CaptureOrigin, at: MonotonicTime)
    /// Start a clip whose first frame is at `from` (the press time: kept frames,
    /// clamped by the recorder to the oldest frame it still has). `torch` is
    /// informational; the flash LED follows the `.flashLED` actions.
    /// Answer with recordingFinalised/recordingFailed(id).
    case startRecording(id: CaptureID, origin: CaptureOrigin, from: MonotonicTime, torch: Bool)
    /// End the clip at `at` (may be slightly in the past: the release time).
    case stopRecording(id: CaptureID, at: MonotonicTime)
    case led(StatusIndication)
    case flashLED(FlashIndication)
    /// A request was refused (already shown on the LED): its answer.
    case refused(CaptureRefusal, origin: CaptureOrigin)
    /// A request's answer is another capture's outcome (a `recordStop` gets the
    /// files of the recording it stopped).
    case answers(CaptureOrigin, with: CaptureID)
    /// A capture failed or timed out (already shown on the LED); for logs.
    case failed(CaptureError)
    /// A storage fault stopped a press: re-check the storage and answer
    /// `storageRestored` if it is usable again.
    case probeStorage
    /// A double tap asks for the next flash mode: the service keeps it as a
    /// runtime setting (and logs it); the next inputs bring it back in their lights.
    case flashModeChanged(FlashMode)
    /// The shutdown gesture completed and all captures are saved.
    case powerOff
}

public enum CaptureRefusal: Equatable, Sendable {
    /// Busy and one press is already queued.
    case busy
    /// Still booting.
    case notReady
    case fault(LEDErrorCode)
    case shuttingDown
    case notRecording
    case alreadyRecording
}
