import ShutterCore

/// The `press` moment's photo for one press or photo request (README "The
/// moment of the press"): the frame whose exposure started closest to the press
/// is chosen as soon as the frames around it have arrived and is encoded to
/// memory at once, off the actor, so a tap only has to write it. Only the
/// chosen frame is held (until encoded); a press that becomes anything else
/// drops the pin and the JPEG with it.
final class PressPin: Sendable {
    let press: MonotonicTime
    /// When the service pinned it (the press became known): bounds the wait for a frame.
    let pinnedAt: MonotonicTime
    /// The encoded photo, or why there is none; set once.
    let photo = Eventually<Result<EncodedPhoto, CaptureError>>()

    init(press: MonotonicTime, pinnedAt: MonotonicTime) {
        self.press = press
        self.pinnedAt = pinnedAt
    }
}
