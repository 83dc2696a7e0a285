/// What the service must do after an input, in order.
public enum CaptureAction: Equatable, Sendable {
    /// Half-press: start an AF cycle now (the still waits for it, bounded).
    case startAutofocus
    /// Keep video frames from this time on (replacing any earlier keep): the
    /// press may become a clip that starts at the press.
    case keepFrames(from: MonotonicTime)
    /// The press will not become a clip: release the kept frames.
    case discardKeptFrames
    /// Capture and save a full-resolution still; `flash` = fire the flash LED
    /// around the exposure. Answer with photoSaved/photoFailed(id).
    case takePhoto(id: CaptureID, origin: CaptureOrigin, pressedAt: MonotonicTime, flash: Bool)
    /// A still from the running video stream (a photo asked for during a
    /// recording: the clip must not be cut for a mode switch).
    /// Answer with photoSaved/photoFailed(id).
    case takeVideoSnapshot(id: CaptureID, origin: CaptureOrigin, at: MonotonicTime)
    /// Start a clip whose first frame is at `from` (the press time: kept frames,
    /// clamped by the recorder to the oldest frame it still has). `torch` is
    /// informational; the flash LED follows the `.flashLED` actions.
    /// Answer with recordingStarted, then recordingFinalised/recordingFailed(id).
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
    /// A double tap changed the flash mode: persist / log it.
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
