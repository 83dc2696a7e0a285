// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// Places microphone samples on the clip's timeline: sample k of the recording is at
/// `anchor + k / rate`, where `anchor` is the first chunk's timestamp and k counts every
/// sample the microphone produced, lost ones (overruns) included. No fixed offset.
/// Samples wait here until the video has reached their time, so a segment boundary
/// (decided by a video frame) can split the audio at exactly the same instant.
struct AudioTimeline {
    let rate: Int
    let channels: Int
    private(set) var anchor: MonotonicTime?
    /// Global sample index of the next sample the microphone will deliver.
    private var nextIndex: Int64 = 0
    private var pending: [(chunk: AudioChunk, start: Int64)] = []
    /// Frames of the head chunk already released.
    private var headUsed = 0
    /// Global index just past the last released sample.
    private(set) var releasedEnd: Int64 = 0

    init(rate: Int, channels: Int) {
        self.rate = rate
        self.channels = channels
    }

    /// False (and nothing kept) when the chunk's format does not match the clip's.
    mutating func add(_ chunk: AudioChunk) -> Bool {
        guard chunk.sampleRate == rate, chunk.channels == channels else { return false }
        if anchor == nil {
            anchor = chunk.timestamp
        } else {
            nextIndex += Int64(chunk.droppedFramesBefore)
        }
        pending.append((chunk, nextIndex))
        nextIndex += Int64(chunk.frameCount)
        return true
    }

    /// Global sample index of time `t` (the first sample at or after it).
    func index(of t: MonotonicTime) -> Int64 {
        guard let anchor else { return 0 }
        let ns = (t - anchor).nanoseconds
        let scaled = ns.multipliedFullWidth(by: Int64(rate))
        let (q, r) = Int64(1_000_000_000).dividingFullWidth(scaled)
        return r > 0 ? q + 1 : q
    }

    /// Offset to add to a global index to get the pts (samples) on a file whose timeline
    /// starts at `origin`.
    func offset(for origin: MonotonicTime) -> Int64 {
        guard let anchor else { return 0 }
        let ns = (anchor - origin).nanoseconds
        return (ns * Int64(rate) + (ns >= 0 ? 500_000_000 : -500_000_000)) / 1_000_000_000
    }

    /// Hands out, in order, the waiting samples whose index is below `limit` (nil = all).
    mutating func release(upTo limit: Int64?,
                          _ deliver: (UnsafeBufferPointer<Int16>, Int, Int64) throws(RecordingError) -> Void)
        throws(RecordingError) {
        while let head = pending.first {
            let start = head.start + Int64(headUsed)
            let available = head.chunk.frameCount - headUsed
            var take = available
            if let limit { take = Int(max(0, min(Int64(available), limit - start))) }
            if take == 0 { break }
            let from = headUsed * channels
            let done = head.chunk.samples.withUnsafeBufferPointer { all -> RecordingError? in
                let slice = UnsafeBufferPointer(rebasing: all[from..<(from + take * channels)])
                do throws(RecordingError) { try deliver(slice, take, start) } catch { return error }
                return nil
            }
            if let done { throw done }
            releasedEnd = start + Int64(take)
            if take == available {
                pending.removeFirst()
                headUsed = 0
            } else {
                headUsed += take
                break
            }
        }
    }

    /// Drops what waits (after an error).
    mutating func discard() { pending.removeAll(); headUsed = 0 }
}
