// SPDX-License-Identifier: BSD-2-Clause
/// What a finished recording produced and lost. Every loss is a count, never silent.
public struct RecordingSummary: Sendable, Equatable {
    /// Files written, in order (one unless segmented). Every listed file is playable.
    public var paths: [String] = []
    public var framesWritten = 0
    /// Frames not encoded because the encoder was behind (the camera is never blocked): left
    /// out before the copy at the encoder's pace, or the queue full.
    public var framesDropped = 0
    /// Of `framesDropped`, those left out at the encoder's pace (spread evenly).
    public var framesThinned = 0
    /// Frames older than the clip start (the press), or not after the previous frame.
    public var framesSkipped = 0
    /// Frames of another size or pixel format than the clip's first frame.
    public var framesRejected = 0
    /// Microphone sample frames (per channel) encoded; overrun gaps are filled with silence
    /// on top of these (counted in `audioOverrunFrames`).
    public var audioFramesWritten = 0
    /// Sample frames the microphone lost (AudioChunk.droppedFramesBefore), filled with silence.
    public var audioOverrunFrames = 0
    /// Sample frames dropped because the audio queue was full.
    public var audioFramesDropped = 0
    /// From the clip start to the end of the last frame written.
    public var duration: Duration = .zero
    /// Set when the recording stopped early or a file could not be finalised.
    public var error: RecordingError?

    public init() {}
}
