// SPDX-License-Identifier: BSD-2-Clause
/// The numbers the button recognizer runs on (from `button.*`, `video.maxSeconds`
/// and `shutdown.*` in the configuration).
public struct GestureSettings: Sendable, Equatable {
    /// A burst of edges is resolved once the raw level has been steady this long.
    public var stabilityMs: Int64
    /// A press released before this is a tap; otherwise a hold.
    public var holdMs: Int64
    /// 0 = off (a tap never waits). Otherwise the max gap between a tap's release
    /// and the next press for the two to be one double tap.
    public var doubleTapMs: Int64
    /// A hold ends here even if the button is still down (`video.maxSeconds` x 1000).
    public var maxHoldMs: Int64
    /// Shutdown: this many quick taps, then a press held for holdMs + countdownMs.
    /// 0 disables the shutdown gesture.
    public var shutdownTaps: Int
    /// Max gap between one tap's release and the next press within the sequence.
    public var shutdownGapMs: Int64
    /// The LED countdown after the final press reaches holdMs; a release cancels it.
    public var shutdownCountdownMs: Int64

    public init(stabilityMs: Int64 = 20, holdMs: Int64 = 1000, doubleTapMs: Int64 = 0,
                maxHoldMs: Int64 = 60_000, shutdownTaps: Int = 3, shutdownGapMs: Int64 = 400,
                shutdownCountdownMs: Int64 = 3000) {
        self.stabilityMs = stabilityMs
        self.holdMs = holdMs
        self.doubleTapMs = doubleTapMs
        self.maxHoldMs = maxHoldMs
        self.shutdownTaps = shutdownTaps
        self.shutdownGapMs = shutdownGapMs
        self.shutdownCountdownMs = shutdownCountdownMs
    }
}
