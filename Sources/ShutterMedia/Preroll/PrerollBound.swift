// SPDX-License-Identifier: BSD-2-Clause
/// How much the pre-roll ring may hold (docs/control-and-api.md "Pre-roll").
public enum PrerollBound {
    /// Beyond the pre-roll the ring keeps this much more: the press is known only after
    /// the stability filter, and the keyframe nearest press − N may lie before it.
    public static let slack = Duration.seconds(1)
    /// The hard byte cap, whatever the bitrate and length.
    public static let hardCap = 64 << 20

    /// The video bitrate over the retained time with 50% headroom (rate control averages
    /// over seconds, and the idle keyframes are larger), plus the raw audio; never above
    /// `hardCap`. At the bound the oldest keyframe intervals go: the pre-roll shortens.
    public static func bytes(settings: RecordingSettings, retain: Duration) -> Int {
        let seconds = Double(retain.nanoseconds) / 1e9
        let bitrate = settings.videoBitrate > 0 ? settings.videoBitrate : 10_000_000
        let video = Double(bitrate) / 8 * seconds * 1.5
        let audio = Double(settings.audioSampleRate * max(1, settings.audioChannels) * 2) * seconds
        return min(hardCap, Int(video + audio))
    }

    /// The ring's retained time for `seconds` of pre-roll.
    public static func retain(seconds: Int) -> Duration { .seconds(seconds) + slack }
}
