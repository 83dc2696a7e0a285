// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// Dates audio chunks on CLOCK_MONOTONIC from the sample clock, steered gently
/// toward ALSA's measured capture times. Sample-count dating keeps chunks exactly
/// contiguous (what a muxer wants); the steering bounds drift between the card's
/// crystal and the kernel clock; a large gap (an overrun) re-anchors, and its size
/// is the number of frames lost. Timestamps never go backwards.
struct AudioChunkClock {
    let sampleRate: Int
    /// Gaps larger than this are real (frames lost), not jitter.
    var gapThreshold: Duration = .milliseconds(20)
    /// Fraction of the measured error corrected per chunk.
    var steering: Int64 = 16

    private var next: MonotonicTime?
    private var last: MonotonicTime?

    init(sampleRate: Int) { self.sampleRate = sampleRate }

    /// The timestamp of a chunk of `frames` whose first sample ALSA measured at
    /// `measuredStart`, and how many frames are missing before it (0 unless there is a gap).
    mutating func stamp(frames: Int, measuredStart: MonotonicTime) -> (time: MonotonicTime, gapFrames: Int) {
        var time = measuredStart
        var gap = 0
        if let expected = next {
            let error = (measuredStart - expected).nanoseconds
            if error > gapThreshold.nanoseconds {
                gap = Int(error * Int64(sampleRate) / 1_000_000_000)
            } else {
                time = expected + .nanoseconds(error / steering)
            }
        }
        if let last, time < last { time = last }
        last = time
        next = time + duration(frames: frames)
        return (time, gap)
    }

    func duration(frames: Int) -> Duration {
        .nanoseconds(Int64(frames) * 1_000_000_000 / Int64(sampleRate))
    }
}
