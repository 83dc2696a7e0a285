// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// How far a recording file is on the storage: written *and* fdatasync'ed, so a power cut
/// now leaves at least this much of it. Reported after each sync that completes a fragment
/// (one per keyframe interval) and once more when the file is finished.
public struct DurableMark: Sendable, Equatable {
    /// The file (as the recorder opened it: a later rename does not change its content).
    public var path: String
    /// Whole fragments (each a keyframe interval of video with its audio) synced.
    public var fragments: Int
    /// Video frames in those fragments (what a decoder of the file finds at least).
    public var frames: Int
    /// File length synced.
    public var bytes: Int64
    /// Where the synced video ends, from the file's origin (the clip start, or a segment's
    /// first frame). The file's own timeline may sit later by the AAC priming delay (~21 ms:
    /// the muxer keeps timestamps non-negative), never earlier.
    public var mediaTime: Duration
    /// The same point on the capture clock (origin + mediaTime): frames captured before it
    /// are on the storage.
    public var capturedBefore: MonotonicTime
    /// The file is finished (trailer written and synced).
    public var complete: Bool

    public init(path: String, fragments: Int, frames: Int, bytes: Int64, mediaTime: Duration,
                capturedBefore: MonotonicTime, complete: Bool) {
        self.path = path
        self.fragments = fragments
        self.frames = frames
        self.bytes = bytes
        self.mediaTime = mediaTime
        self.capturedBefore = capturedBefore
        self.complete = complete
    }
}
