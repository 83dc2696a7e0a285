// SPDX-License-Identifier: BSD-2-Clause
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

/// The encoder thread's work: takes queued frames and audio, places them on the clip's
/// timeline, splits segments, writes and syncs files, and stops cleanly on an error.
/// Lives on (and only on) the encoder thread.
final class RecordingPipeline {
    private let settings: RecordingSettings
    private let start: MonotonicTime
    private let files: RecordingFiles
    private let onDurable: (@Sendable (DurableMark) -> Void)?
    private let queue: RecordingQueue
    private let wallTime: (@Sendable (MonotonicTime) -> WallTime)?
    private let cardSync: CardSync
    private let clock = SystemClock()
    private var audio: AudioTimeline
    private var current: SegmentFile?
    /// The previous segment, still taking audio up to `closingEnd` (a segment boundary).
    private var closing: SegmentFile?
    private var closingEnd = MonotonicTime(nanoseconds: 0)
    private var lastFrameTime: MonotonicTime?
    /// Between the last two frames written.
    private var lastInterval: Duration?
    private var summary = RecordingSummary()
    private var failed = false
    private var warnedAudioFormat = false
    /// The frame being written opened a file (and its encoder): its time is a one-off.
    private var opened = false

    init(settings: RecordingSettings, start: MonotonicTime, files: @escaping RecordingFiles,
         onDurable: (@Sendable (DurableMark) -> Void)?, queue: RecordingQueue,
         wallTime: (@Sendable (MonotonicTime) -> WallTime)? = nil, cardSync: CardSync = CardSync()) {
        self.settings = settings
        self.wallTime = wallTime
        self.cardSync = cardSync
        self.start = start
        self.files = files
        self.onDurable = onDurable
        self.queue = queue
        audio = AudioTimeline(rate: settings.audioSampleRate, channels: max(1, settings.audioChannels))
    }

    func run() {
        while let item = queue.pop() {
            switch item {
            case .video(let frame):
                opened = false
                if !failed { attempt { () throws(RecordingError) in try video(frame) } }
                queue.recycle(frame, measured: !opened)
            case .packet(let p):
                if !failed { attempt { () throws(RecordingError) in try packet(p) } }
            case .audio(let chunk):
                if !failed && settings.audioChannels > 0 {
                    if !audio.add(chunk) {
                        if !warnedAudioFormat {
                            warnedAudioFormat = true
                            RecordingLog.warning("audio chunks of \(chunk.channels) ch at \(chunk.sampleRate) Hz ignored: the clip is \(settings.audioChannels) ch at \(settings.audioSampleRate) Hz")
                        }
                    }
                }
            }
        }
        if !failed { attempt { () throws(RecordingError) in try finishAll() } }
        if let last = lastFrameTime { summary.duration = (last - start) + lastFrameLasts }
        queue.complete(summary)
    }

    private func attempt(_ body: () throws(RecordingError) -> Void) {
        do { try body() } catch { fail(error) }
    }

    private func video(_ frame: QueuedFrame) throws(RecordingError) {
        if frame.timestamp < start || (lastFrameTime.map { frame.timestamp <= $0 } ?? false) {
            queue.countSkipped()
            return
        }
        if let current, frame.width != current.width || frame.height != current.height
            || frame.format != current.format {
            summary.framesRejected += 1
            if summary.framesRejected == 1 {
                RecordingLog.warning("frame \(frame.width)x\(frame.height) \(frame.format) dropped: the clip is \(current.width)x\(current.height) \(current.format)")
            }
            return
        }
        if current == nil {
            current = try open(origin: start, width: frame.width, height: frame.height, format: frame.format)
            queue.fillPoolWhileIdle(byteCount: frame.buffer.capacity)
        } else if settings.segmentSeconds > 0, let cur = current,
                  (frame.timestamp - cur.origin).nanoseconds >= Int64(settings.segmentSeconds * 1e9) {
            try rotate(at: frame.timestamp, width: frame.width, height: frame.height, format: frame.format)
        }
        guard try current!.video(frame) else {
            queue.countSkipped()
            return
        }
        try written(at: frame.timestamp)
    }

    /// A pre-roll packet: a file starts (and a segment splits) only at a keyframe.
    private func packet(_ p: EncodedPacket) throws(RecordingError) {
        if p.time < start || (lastFrameTime.map { p.time <= $0 } ?? false) {
            queue.countSkipped()
            return
        }
        let s = p.source
        if let current, current.packets !== s {
            summary.framesRejected += 1  // the encoder changed (another camera size): not this clip's track
            if summary.framesRejected == 1 {
                RecordingLog.warning("packets of a \(s.width)x\(s.height) encoder dropped: the clip is \(current.width)x\(current.height)")
            }
            return
        }
        if current == nil {
            guard p.isKey else { queue.countSkipped(); return }
            current = try open(origin: start, width: s.width, height: s.height, format: s.format, packets: s)
        } else if settings.segmentSeconds > 0, p.isKey, let cur = current,
                  (p.time - cur.origin).nanoseconds >= Int64(settings.segmentSeconds * 1e9) {
            try rotate(at: p.time, width: s.width, height: s.height, format: s.format, packets: s)
        }
        guard try current!.packet(p) else {
            queue.countSkipped()
            return
        }
        try written(at: p.time)
    }

    /// A frame is in the file: audio up to it, then the syncs that are due.
    private func written(at time: MonotonicTime) throws(RecordingError) {
        summary.framesWritten += 1
        if let previous = lastFrameTime { lastInterval = time - previous }
        lastFrameTime = time
        try releaseAudio(upTo: audio.index(of: time))
        let now = clock.now()
        if let m = try closing?.syncIfDue(now: now) { reportDurable(m, now: now) }
        if let m = try current!.syncIfDue(now: now) { reportDurable(m, now: now) }
    }

    /// More of a file is on the storage: the log line (how far, and how far behind the
    /// clock and the camera), the recorder's `durable`, the caller's callback.
    private func reportDurable(_ m: DurableMark, now: MonotonicTime) {
        queue.durable = m
        onDurable?(m)
        func s(_ d: Duration) -> String { cFormat("%.3f", Double(d.nanoseconds) / 1e9) }
        if m.complete {
            RecordingLog.durable("durable: \(m.path) complete, \(s(m.mediaTime)) s (\(m.fragments) fragments, \(m.frames) frames)")
        } else {
            let newest = queue.newestFrame.map { ", \(s($0 - m.capturedBefore)) s behind the newest frame" } ?? ""
            RecordingLog.durable("durable: \(m.path) to \(s(m.mediaTime)) s (fragment \(m.fragments), \(m.frames) frames), \(s(now - m.capturedBefore)) s behind the clock\(newest)")
        }
    }

    /// The frame starts a new file; the old one keeps taking audio up to its time.
    private func rotate(at time: MonotonicTime, width: Int, height: Int, format: PixelFormat,
                        packets: PacketSource? = nil) throws(RecordingError) {
        if closing != nil { try finishClosing() }
        closing = current
        closingEnd = time
        current = nil
        current = try open(origin: time, width: width, height: height, format: format, packets: packets)
        if settings.audioChannels == 0 { try finishClosing() }
    }

    private func open(origin: MonotonicTime, width: Int, height: Int, format: PixelFormat,
                      packets: PacketSource? = nil) throws(RecordingError) -> SegmentFile {
        // Created inside the namer's step: it may hold a lock until the file exists.
        var made: Result<(SegmentFile, String), RecordingError>?
        do {
            try files { path in
                do throws(RecordingError) {
                    let file = try SegmentFile(path: path, origin: origin, width: width, height: height, format: format,
                                               packets: packets, settings: settings, clock: clock, cardSync: cardSync,
                                               created: wallTime.flatMap { ClipLabels.creationTime($0(origin)) })
                    made = .success((file, path))
                } catch {
                    made = .failure(error)
                    throw error
                }
            }
        } catch {
            if case .failure(let e)? = made { throw e }
            throw RecordingError(.pathUnavailable, "no file name for the recording (\(error)); check the storage")
        }
        guard case .success(let (file, path))? = made else {
            throw RecordingError(.pathUnavailable, "no file for the recording: its namer created none; check the storage")
        }
        summary.paths.append(path)
        opened = true
        RecordingLog.info("recording to \(path)")
        return file
    }

    private func releaseAudio(upTo limit: Int64?) throws(RecordingError) {
        guard settings.audioChannels > 0, let current else { return }
        let endIndex = closing.map { _ in audio.index(of: closingEnd) }
        let closingOffset = closing.map { audio.offset(for: $0.origin) } ?? 0
        let currentOffset = audio.offset(for: current.origin)
        let channels = audio.channels
        try audio.release(upTo: limit) { (samples, frames, start) throws(RecordingError) in
            var skip = 0
            if let closing, let endIndex, start < endIndex {
                skip = Int(min(Int64(frames), endIndex - start))
                try closing.audio(UnsafeBufferPointer(rebasing: samples[0..<(skip * channels)]),
                                  frames: skip, pts: start + closingOffset)
            }
            if skip < frames {
                try current.audio(UnsafeBufferPointer(rebasing: samples[(skip * channels)...]),
                                  frames: frames - skip, pts: start + Int64(skip) + currentOffset)
            }
            summary.audioFramesWritten += frames
        }
        if closing != nil, let endIndex,
           audio.releasedEnd >= endIndex || (lastFrameTime.map { $0 - closingEnd > .seconds(1) } ?? false) {
            try finishClosing()
        }
    }

    private func finishClosing() throws(RecordingError) {
        guard let file = closing else { return }
        closing = nil
        try finish(file)
    }

    private func finishAll() throws(RecordingError) {
        // Audio up to the end of the last frame, so both tracks end together.
        if let last = lastFrameTime { try releaseAudio(upTo: audio.index(of: last + lastFrameLasts)) }
        try finishClosing()
        if let file = current {
            current = nil
            try finish(file)
        }
    }

    /// How long the last frame lasts: a frame period, or the interval before it when frames
    /// were being left out (up to 1 s), so the sound of the clip's end is kept.
    private var lastFrameLasts: Duration {
        let nominal = Duration.nanoseconds(1_000_000_000 / Int64(settings.fps))
        guard let gap = lastInterval, gap > nominal * 3 / 2 else { return nominal }
        return min(gap, .seconds(1))
    }

    private func finish(_ file: SegmentFile) throws(RecordingError) {
        do {
            if try !file.finish() { summary.paths.removeAll { $0 == file.path } }
            if let m = file.durable, m.complete { reportDurable(m, now: clock.now()) }
        } catch {
            if !file.keptAfterError { summary.paths.removeAll { $0 == file.path } }
            throw error
        }
    }

    /// First error wins: stop taking input, finalise what can be, keep what was written.
    private func fail(_ error: RecordingError) {
        failed = true
        summary.error = summary.error ?? error
        queue.fail(error)
        RecordingLog.error(error.description)
        audio.discard()
        for file in [closing, current].compactMap({ $0 }) {
            if file.isOpen {
                do { try finish(file) } catch {}
            } else if !file.keptAfterError {
                summary.paths.removeAll { $0 == file.path }
            }
        }
        closing = nil
        current = nil
    }
}
