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

/// One MP4 file of a recording: its fd, its FFmpeg writer, its syncs. The timeline of
/// the file starts at `origin` (the press for the first segment, the first frame of
/// the segment for the next ones).
final class SegmentFile {
    let path: String
    let origin: MonotonicTime
    let width: Int
    let height: Int
    let format: PixelFormat
    private let fd: Int32
    private var writer: OpaquePointer?
    private var headerBytes: Int64 = 0
    private var syncedBytes: Int64 = 0
    private var lastSync: MonotonicTime
    private let syncInterval: Duration
    private(set) var framesWritten = 0
    private(set) var lastFramePTS: Int64 = -1
    /// pts (in samples from `origin`) just past the last audio sample given to this file.
    private(set) var audioEnd: Int64 = 0

    /// Creates (or truncates: the storage policy may have reserved it) and opens `path`.
    /// With `packets`, the video comes as that pre-roll encoder's packets (`packet`), not frames.
    init(path: String, origin: MonotonicTime, width: Int, height: Int, format: PixelFormat,
         packets: PacketSource? = nil, settings: RecordingSettings, clock: SystemClock,
         cardSync: CardSync = CardSync(), created: String? = nil) throws(RecordingError) {
        self.path = path
        self.origin = origin
        self.width = width
        self.height = height
        self.format = format
        self.packets = packets
        syncInterval = settings.syncInterval
        lastSync = clock.now()
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0 { throw SegmentFile.ioError(errno, "open", path) }
        self.fd = fd
        var cfg = SegmentFile.config(settings: settings, width: width, height: height, format: format)
        // The file's creation time (its origin: the first frame's exposure start), if trusted.
        let created = created ?? ""
        let labels = settings.labels
        var errbuf = [CChar](repeating: 0, count: 256)
        var w: OpaquePointer?
        let r = settings.videoEncoder.withCString { enc in
            settings.preset.withCString { preset in
                created.withCString { created in
                    labels.make.withCString { make in
                        labels.model.withCString { model in
                            labels.software.withCString { software in
                                cfg.video_encoder = enc
                                cfg.preset = preset
                                cfg.creation_time = created
                                cfg.make = make
                                cfg.model = model
                                cfg.software = software
                                if let packets { return sav_writer_open_packets(&cfg, packets.raw, fd, &w, &errbuf, errbuf.count) }
                                return sav_writer_open(&cfg, fd, &w, &errbuf, errbuf.count)
                            }
                        }
                    }
                }
            }
        }
        if r < 0 {
            let detail = String(decoding: errbuf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let ioErrno = errno
            close(fd)
            unlink(path)
            throw SegmentFile.openError(r, detail: detail, encoder: settings.videoEncoder, path: path,
                                        ioErrno: ioErrno)
        }
        writer = w
        headerBytes = sav_writer_committed_bytes(w)
        // The new name must survive a power cut too.
        do {
            try AtomicFile.fsyncDirectory(PlainIO.deletingLastComponent(path), sync: cardSync)
        } catch {
            RecordingLog.warning("fsync of the directory of \(path) failed: \(error)")
        }
    }

    /// False once finished or cut after an error.
    var isOpen: Bool { writer != nil }

    deinit {
        if let writer { sav_writer_free(writer) }
    }

    /// False when the frame is not after the previous one on the 90 kHz clock (skipped).
    func video(_ frame: QueuedFrame) throws(RecordingError) -> Bool {
        guard let writer else { return false }
        // 90 kHz, the MP4 video clock: ns * 90000 / 1e9.
        let pts = (frame.timestamp - origin).nanoseconds * 9 / 100_000
        if pts <= lastFramePTS { return false }
        try check(SegmentFile.withPlanes(of: frame) { p, s in sav_writer_video(writer, p, s, pts) })
        framesWritten += 1
        lastFramePTS = pts
        return true
    }

    /// The pre-roll encoder this file takes packets of (nil: it encodes frames itself).
    let packets: PacketSource?

    /// Writes a pre-roll packet at its capture time on this file's timeline. False when
    /// not after the previous one on the 90 kHz clock (skipped).
    func packet(_ p: EncodedPacket) throws(RecordingError) -> Bool {
        guard let writer else { return false }
        let pts = (p.time - origin).nanoseconds * 9 / 100_000
        if pts <= lastFramePTS || pts < 0 { return false }
        try check(sav_writer_packet(writer, p.raw, pts))
        framesWritten += 1
        lastFramePTS = pts
        return true
    }

    /// The C view of a queued frame's planes.
    static func withPlanes(of frame: QueuedFrame,
                           _ body: (UnsafePointer<UnsafePointer<UInt8>?>, UnsafePointer<Int32>) -> Int32) -> Int32 {
        let base = UnsafePointer<UInt8>(frame.buffer.bytes.assumingMemoryBound(to: UInt8.self))
        var planes: (UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?) = (nil, nil, nil)
        var strides: (Int32, Int32, Int32) = (0, 0, 0)
        let n = frame.offsets.count
        planes.0 = base + frame.offsets[0]
        strides.0 = Int32(frame.strides[0])
        if n > 1 { planes.1 = base + frame.offsets[1]; strides.1 = Int32(frame.strides[1]) }
        if n > 2 { planes.2 = base + frame.offsets[2]; strides.2 = Int32(frame.strides[2]) }
        return withUnsafePointer(to: &planes) { pp in
            withUnsafePointer(to: &strides) { sp in
                pp.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 3) { p in
                    sp.withMemoryRebound(to: Int32.self, capacity: 3) { s in body(p, s) }
                }
            }
        }
    }

    /// The shim's configuration for these settings and this picture.
    static func config(settings: RecordingSettings, width: Int, height: Int, format: PixelFormat) -> sav_config {
        var cfg = sav_config()
        cfg.width = Int32(width)
        cfg.height = Int32(height)
        cfg.input_format = Int32(SegmentFile.savFormat(format).rawValue)
        cfg.fps = Int32(settings.fps)
        cfg.gop = Int32(settings.keyframeFrames)
        cfg.video_bitrate = Int64(settings.videoBitrate)
        cfg.crf = Int32(settings.crf)
        cfg.threads = Int32(settings.threads)
        cfg.audio_channels = Int32(settings.audioChannels)
        cfg.audio_sample_rate = Int32(settings.audioSampleRate)
        cfg.audio_bitrate = Int64(settings.audioBitrate)
        cfg.rotation = Int32(settings.labels.rotation)
        cfg.hflip = settings.labels.hflip ? 1 : 0
        cfg.vflip = settings.labels.vflip ? 1 : 0
        return cfg
    }

    /// `samples` interleaved; `pts` in samples from `origin`.
    func audio(_ samples: UnsafeBufferPointer<Int16>, frames: Int, pts: Int64) throws(RecordingError) {
        guard let writer, frames > 0 else { return }
        try check(sav_writer_audio(writer, samples.baseAddress, Int32(frames), pts))
        audioEnd = max(audioEnd, pts + Int64(frames))
    }

    /// fdatasync when the interval has passed and a fragment was written since the last one.
    /// Returns what the sync made durable when it completed a fragment, else nil.
    func syncIfDue(now: MonotonicTime) throws(RecordingError) -> DurableMark? {
        guard let writer else { return nil }
        // Each whole fragment (one per keyframe, ~1 s) is synced as soon as it is
        // written, and at least every syncInterval: a power cut loses only the open one.
        let committed = sav_writer_committed_bytes(writer)
        guard committed > syncedBytes || now - lastSync >= syncInterval else { return nil }
        lastSync = now
        guard committed > syncedBytes else { return nil }
        // What the committed bytes hold, read before the sync (this thread alone writes).
        let fragments = sav_writer_committed_fragments(writer)
        let videoEnd = sav_writer_committed_video_end(writer)
        let frames = sav_writer_committed_video_frames(writer)
        if fdatasync(fd) != 0 { throw failAndKeep(SegmentFile.ioError(errno, "fdatasync", path)) }
        syncedBytes = committed
        return mark(fragments: fragments, frames: frames, videoEnd: videoEnd, complete: false)
    }

    /// The newest point reported durable (nil before the first whole fragment is synced).
    private(set) var durable: DurableMark?

    private func mark(fragments: Int64, frames: Int64, videoEnd: Int64, complete: Bool) -> DurableMark? {
        guard videoEnd >= 0, complete || fragments > Int64(durable?.fragments ?? 0) else { return nil }
        // 1/90000 s to ns: * 1e9 / 9e4.
        let media = Duration.nanoseconds(videoEnd * 100_000 / 9)
        let m = DurableMark(path: path, fragments: Int(fragments), frames: Int(frames), bytes: syncedBytes,
                            mediaTime: media,
                            capturedBefore: origin + media, complete: complete)
        durable = m
        return m
    }

    /// Flushes encoders, writes the trailer, syncs and closes. Returns false when the file
    /// held no frame and was removed. Afterwards `durable` marks the whole file complete.
    func finish() throws(RecordingError) -> Bool {
        guard let w = writer else { return false }
        let r = sav_writer_finish(w)
        if r < 0 {
            let error = errorFor(r)
            return try keepCommitted(after: error)
        }
        let bytes = sav_writer_committed_bytes(w)
        let fragments = sav_writer_committed_fragments(w)
        let videoEnd = sav_writer_committed_video_end(w)
        let frames = sav_writer_committed_video_frames(w)
        sav_writer_free(w)
        writer = nil
        if fdatasync(fd) != 0 {
            let e = errno
            close(fd)
            throw SegmentFile.ioError(e, "fdatasync", path)
        }
        close(fd)
        syncedBytes = bytes
        _ = mark(fragments: fragments, frames: frames, videoEnd: videoEnd, complete: true)
        return true
    }

    /// After a failed write: cut the file back to its last whole fragment (playable,
    /// like after a power cut), sync, close; remove it if no fragment made it. Rethrows.
    private func keepCommitted(after error: RecordingError) throws(RecordingError) -> Bool {
        guard let w = writer else { throw error }
        let committed = sav_writer_committed_bytes(w)
        sav_writer_free(w)
        writer = nil
        _ = ftruncate(fd, off_t(committed))
        _ = fdatasync(fd)
        close(fd)
        keptAfterError = committed > headerBytes
        if !keptAfterError {
            unlink(path)
            RecordingLog.error("\(path): nothing recorded before the error, file removed: \(error.message)")
        } else {
            RecordingLog.error("\(path): kept \(committed) bytes of whole fragments after: \(error.message)")
        }
        throw error
    }

    /// Whether the file still has content after an error was handled.
    private(set) var keptAfterError = false

    private func failAndKeep(_ error: RecordingError) -> RecordingError {
        do { _ = try keepCommitted(after: error) } catch {}
        return error
    }

    private func check(_ r: Int32) throws(RecordingError) {
        if r >= 0 { return }
        throw failAndKeep(errorFor(r))
    }

    private func errorFor(_ r: Int32) -> RecordingError {
        if r == -Int32(SAV_ERR_IO.rawValue), let w = writer {
            return SegmentFile.ioError(sav_writer_io_errno(w), "write", path)
        }
        var buf = [CChar](repeating: 0, count: 128)
        sav_strerror(r, &buf, buf.count)
        let text = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return RecordingError(.encoderFailed, "encoding \(path) failed: \(text); the clip was cut here")
    }

    static func ioError(_ e: Int32, _ call: String, _ path: String) -> RecordingError {
        let sys = SystemError(errno: e, call: call, path: path)
        if sys.isNoSpace {
            return RecordingError(.noSpace, "the card is full (\(sys)); the clip was kept up to the last second written, free space to record again", errno: e)
        }
        return RecordingError(.ioError, "\(sys); check the card", errno: e)
    }

    private static func openError(_ r: Int32, detail: String, encoder: String, path: String,
                                  ioErrno: Int32) -> RecordingError {
        switch -r {
        case Int32(SAV_ERR_NO_VIDEO_ENCODER.rawValue):
            return RecordingError(.encoderMissing, "\(detail); install an FFmpeg built with \(encoder) or set the board's video encoder to one listed by `ffmpeg -encoders` (libx264 works everywhere)")
        case Int32(SAV_ERR_NO_AUDIO_ENCODER.rawValue):
            return RecordingError(.encoderMissing, "\(detail); install Debian's libavcodec (it has the native AAC encoder) or set audio channels to 0")
        case Int32(SAV_ERR_VIDEO_OPEN.rawValue):
            return RecordingError(.encoderFailed, "\(detail); for h264_v4l2m2m check /dev/video11 exists and the user is in the video group, or use libx264")
        case Int32(SAV_ERR_IO.rawValue):
            return ioError(ioErrno == 0 ? EIO : ioErrno, "write", path)
        default:
            return RecordingError(.encoderFailed, "opening \(path) failed: \(detail.isEmpty ? "code \(r)" : detail)")
        }
    }

    static func savFormat(_ f: PixelFormat) -> sav_pixel_format {
        switch f {
        case .i420: return SAV_PIX_I420
        case .nv12: return SAV_PIX_NV12
        case .yuyv: return SAV_PIX_YUYV
        case .rgb24: return SAV_PIX_RGB24
        case .bgr24: return SAV_PIX_BGR24
        }
    }
}
