// SPDX-License-Identifier: BSD-2-Clause
/// A block of interleaved signed 16-bit PCM from the microphone. `timestamp` is
/// the capture time of the first sample on CLOCK_MONOTONIC (from ALSA's
/// monotonic timestamps or the simulated mic's sample clock).
public struct AudioChunk: Sendable {
    public var samples: [Int16]
    public var channels: Int
    public var sampleRate: Int
    public var timestamp: MonotonicTime
    /// Samples lost before this chunk (overrun), counted, never silent.
    public var droppedFramesBefore: Int

    public init(samples: [Int16], channels: Int, sampleRate: Int, timestamp: MonotonicTime,
                droppedFramesBefore: Int = 0) {
        self.samples = samples
        self.channels = channels
        self.sampleRate = sampleRate
        self.timestamp = timestamp
        self.droppedFramesBefore = droppedFramesBefore
    }

    public var frameCount: Int { channels > 0 ? samples.count / channels : 0 }
}
