// SPDX-License-Identifier: BSD-2-Clause
/// What the button recognizer reports, in time order. Live consumers (the
/// capture state machine, LEDs) act on the early events; the offline replay
/// prints the completed gestures.
public enum GestureEvent: Sendable, Equatable {
    /// An accepted press, dated at its burst's first edge. Autofocus starts now,
    /// and frames from now on are kept for a possible clip.
    case pressed(at: MonotonicTime)
    /// The press has lasted holdMs: it is a hold; the clip starts at `pressedAt`.
    case holdStarted(pressedAt: MonotonicTime, at: MonotonicTime)
    /// A completed tap (released before holdMs).
    case tap(start: MonotonicTime, end: MonotonicTime)
    /// A completed hold: released, or cut at the max duration.
    case hold(start: MonotonicTime, end: MonotonicTime)
    /// Two taps, the second pressed within doubleTapMs of the first's release.
    case doubleTap(start: MonotonicTime, end: MonotonicTime)
    /// The shutdown sequence's final press reached holdMs (right after its
    /// holdStarted): the LED countdown runs until `deadline`; a release before
    /// then cancels the shutdown (the hold is still a hold).
    case shutdownCountdown(start: MonotonicTime, deadline: MonotonicTime)
    case shutdownCancelled(at: MonotonicTime)
    /// The countdown completed with the button still pressed; comes right after
    /// the hold it ended. `start` is the sequence's first tap.
    case shutdown(start: MonotonicTime, end: MonotonicTime)
}
