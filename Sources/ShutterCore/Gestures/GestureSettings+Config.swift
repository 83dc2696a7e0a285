// SPDX-License-Identifier: BSD-2-Clause
/// The recognizer's settings from the configuration: the daemon's and `shutterctl
/// gestures`' replay use this one mapping, so a replay answers as the button would.
extension GestureSettings {
    public init(config: ShutterConfig) {
        self.init(stabilityMs: Int64(config.button.stabilityMs), holdMs: Int64(config.button.holdMs),
                  doubleTapMs: Int64(config.button.doubleTapMs), maxHoldMs: Int64(config.video.maxSeconds) * 1000,
                  shutdownTaps: config.shutdown.taps, shutdownGapMs: Int64(config.shutdown.gapMs),
                  shutdownCountdownMs: Int64(config.shutdown.countdownMs))
    }
}
