// SPDX-License-Identifier: BSD-2-Clause
import CShutterAV
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterStorage

/// Records one clip: H.264 + AAC in fragmented MP4, encoded on its own thread.
///
/// The clip's timeline starts at `start` (the button press). Frames carry sensor
/// timestamps, audio chunks their capture time, all on CLOCK_MONOTONIC. `append` never
/// blocks: frames are copied into a bounded pool; when the encoder is behind, frames are
/// left out before the copy, evenly at its pace (`FrameThinning`), and dropped when the
/// pool is full anyway (both counted).
/// Call `finish()` exactly once (clean stop, release, SIGTERM): it returns when every
/// file is finalised and synced.
/// Names a recording's next file and creates it: calls `create` with the name before it
/// returns (see `Recorder.init(files:)`).
public typealias RecordingFiles = @Sendable (_ create: (String) throws -> Void) throws -> Void

public final class Recorder: Sendable {
    private let queue: RecordingQueue
    private let start: MonotonicTime

    /// - Parameter files: called on the encoder thread for each new file (the first at
    ///   the first frame, then one per segment) with the step that creates it: it names the
    ///   file (the storage policy reserves the name) and calls that step with the name before
    ///   it returns, so a namer that may rename the file meanwhile (the service's speculative
    ///   clip) can hold its lock until the file exists.
    /// - Parameter onDurable: called on the encoder thread each time more of the clip is on
    ///   the storage (after the sync of each fragment, and when a file is finished); it also
    ///   goes to the log as a `durable:` line. Must not block.
    /// - Parameter wallTime: the wall time of a point of the clip's timeline: dates each
    ///   file (its creation time) when trusted.
    /// - Parameter work: where the frames, packets and sound held count as work in flight.
    /// - Parameter cardSync: how a new file's folder is synced (the storage's `cardSync`).
    /// - Throws: `RecordingError` `.invalidSettings`, or `.encoderMissing` when this
    ///   FFmpeg lacks the video encoder (checked now, before any frame).
    public init(settings: RecordingSettings, start: MonotonicTime,
                files: @escaping RecordingFiles,
                onDurable: (@Sendable (DurableMark) -> Void)? = nil,
                wallTime: (@Sendable (MonotonicTime) -> WallTime)? = nil,
                work: InFlight? = nil, cardSync: CardSync = CardSync()) throws(RecordingError) {
        try settings.validate()
        Recorder.quietFFmpeg
        if sav_has_encoder(settings.videoEncoder) == 0 {
            throw RecordingError(.encoderMissing, "this FFmpeg (libavcodec) has no video encoder named '\(settings.videoEncoder)'; install an FFmpeg built with it or set the board's video encoder to one listed by `ffmpeg -encoders` (libx264 works everywhere)")
        }
        self.start = start
        let queue = RecordingQueue(frameCapacity: settings.queueFrames, work: work, overlay: settings.overlay)
        self.queue = queue
        PlainThread.start(name: "shutter.recording") {
            RecordingPipeline(settings: settings, start: start, files: files, onDurable: onDurable,
                              queue: queue, wallTime: wallTime, cardSync: cardSync).run()
        }
    }

    /// A recording whose files are named by `nextPath` alone (nothing renames them).
    public convenience init(settings: RecordingSettings, start: MonotonicTime,
                            nextPath: @escaping @Sendable () throws -> String,
                            onDurable: (@Sendable (DurableMark) -> Void)? = nil,
                            wallTime: (@Sendable (MonotonicTime) -> WallTime)? = nil,
                            work: InFlight? = nil) throws(RecordingError) {
        try self.init(settings: settings, start: start, files: { create in try create(nextPath()) },
                      onDurable: onDurable, wallTime: wallTime, work: work)
    }

    private static let quietFFmpeg: Void = sav_quiet_logs()

    /// Queues a frame for encoding. False when it was not taken: before the clip start,
    /// left out at the encoder's pace or the queue full (counted in `framesDropped`), or the
    /// recording stopped on an error.
    @discardableResult
    public func append(_ frame: Frame) -> Bool {
        if frame.timestamp < start { queue.countSkipped(); return false }
        return report(queue.push(frame: frame))
    }

    /// Whether the encoder's pace takes this frame: the decision of `append(_:)` alone, for a
    /// caller that hands frames over through a queue of its own, so a frame left out is let go
    /// at once (its camera buffer back) rather than carried there. Once per frame; a frame it
    /// takes then goes to `append(taken:)`.
    public func takes(_ frame: Frame) -> Bool {
        if frame.timestamp < start { return true }  // `append(taken:)` counts it as skipped
        return report(queue.takes(frame: frame))
    }

    /// Queues a frame `takes(_:)` took (copied; dropped only when the pool is full).
    @discardableResult
    public func append(taken frame: Frame) -> Bool {
        if frame.timestamp < start { queue.countSkipped(); return false }
        return report(queue.push(frame: frame, paced: false))
    }

    private func report(_ r: (Bool, firstDrop: Bool)) -> Bool {
        if r.firstDrop {
            RecordingLog.warning("encoder behind: leaving out frames (evenly at its pace, or the queue of \(queue.frameCapacity) full); count in the summary")
        }
        return r.0
    }

    /// Like `append(_:)` but waits for room instead of dropping: for encoding stored or
    /// synthetic frames as fast as the encoder goes (benchmarks, tools). Never call it from
    /// a camera callback.
    @discardableResult
    public func appendWaiting(_ frame: Frame) -> Bool {
        if frame.timestamp < start { queue.countSkipped(); return false }
        return queue.push(frame: frame, paced: false, wait: true).accepted
    }

    /// Queues a pre-roll encoder's packet (the clip's video then comes only as packets,
    /// starting at a keyframe). False when before the clip start or after an error.
    @discardableResult
    public func append(packet: EncodedPacket) -> Bool {
        if packet.time < start { queue.countSkipped(); return false }
        return queue.push(packet: packet)
    }

    /// Queues microphone samples. Overruns (`droppedFramesBefore`) become silence on the
    /// timeline and are counted.
    public func append(_ audio: AudioChunk) {
        queue.push(audio: audio)
    }

    /// Queues pre-roll audio: never dropped for a full queue (the ring already holds it).
    public func append(prerollAudio audio: AudioChunk) {
        queue.push(audio: audio, held: true)
    }

    /// The error that stopped the recording early, if any (the files so far are kept).
    public var error: RecordingError? { queue.error }

    /// Frames dropped so far because the encoder was behind.
    public var framesDropped: Int { queue.framesDroppedNow }

    /// The newest point of the clip known to be on the storage (of the newest file when
    /// segmented); nil until the first fragment is synced.
    public var durable: DurableMark? { queue.durable }

    /// Capture time of the newest frame given to `append` after the start (taken or dropped):
    /// with `durable`, how much of what the camera delivered a power cut now would lose.
    public var newestFrame: MonotonicTime? { queue.newestFrame }

    /// A recorder dropped without `finish()` still finalises its files, on its own thread.
    deinit { queue.finish() }

    /// Flushes, finalises and syncs every file; blocks until done. Later calls return the
    /// same summary.
    public func finish() -> RecordingSummary {
        queue.finish()
        let (s, first) = queue.waitForResult()
        guard first else { return s }
        if s.framesDropped > 0 || s.audioOverrunFrames > 0 || s.audioFramesDropped > 0 {
            RecordingLog.warning("clip lost \(s.framesDropped) video frames (encoder behind; \(s.framesThinned) left out evenly), \(s.audioOverrunFrames) audio frames (microphone overrun, filled with silence), \(s.audioFramesDropped) audio frames (queue full)")
        }
        RecordingLog.info("clip done: \(s.paths.joined(separator: ", ")), \(s.framesWritten) frames, \(s.duration.milliseconds) ms\(s.error.map { ", error: \($0)" } ?? "")")
        return s
    }
}
