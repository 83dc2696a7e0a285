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
import Synchronization

/// The video encoder that runs while idle when pre-roll is on: frames in (copied, never
/// blocking the camera; when it is behind, left out evenly before the copy as a clip's
/// encoder does, `FrameThinning`), packets out to `onPacket` on its own thread. A clip then takes
/// packets instead of encoding frames, so a press starts no encoder.
///
/// Keyframes: while no clip is being written (`clipOpen` false) one is forced every
/// `idleKeyframeFrames` frames (< 0.2 s), so the keyframe nearest any press − N is within
/// 0.1 s of it; while a clip is written the keyframe interval applies (`keyframeInterval`,
/// 1 s: fragments and fsyncs as without pre-roll), by time as well as by frame count, so
/// dropped frames do not stretch the fragment a power cut would lose.
public final class PrerollEncoder: Sendable {
    private let queue: RecordingQueue
    private let shared = EncoderShared()

    /// `scaledTo`: frames scaled down to this size before they are encoded (swscale, on
    /// the encoder's thread): the live viewers' smaller stream. Nil = the frames' size.
    /// `niceness`: the thread's nice value (a live viewers' encoder: 10, so under CPU
    /// pressure it, not pre-roll's or a clip's encoder, falls behind and drops frames).
    /// `work`: where the frames held count as work in flight (until encoded and their
    /// packets handed on).
    public init(settings: RecordingSettings, scaledTo: PixelSize? = nil, niceness: Int32 = 0,
                work: InFlight? = nil, onPacket: @escaping @Sendable (EncodedPacket) -> Void) {
        PrerollEncoder.quietFFmpeg
        let queue = RecordingQueue(frameCapacity: settings.queueFrames, work: work, overlay: settings.overlay)
        self.queue = queue
        let shared = self.shared
        PlainThread.start(name: "shutter.preroll") {
            // Linux: the nice value is the calling thread's own.
            if niceness != 0 { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness) }
            EncoderLoop(settings: settings, scaledTo: scaledTo, queue: queue, shared: shared, onPacket: onPacket).run()
        }
    }

    private static let quietFFmpeg: Void = sav_quiet_logs()

    /// Frames between forced keyframes while idle: under 0.2 s, so the nearest keyframe
    /// to any instant is under 0.1 s away.
    public static func idleKeyframeFrames(fps: Int) -> Int { max(1, Int(0.2 * Double(fps)) - 1) }

    /// Whether a clip takes the packets now (long GOP) or only the ring does (short GOP).
    public var clipOpen: Bool {
        get { shared.clipOpen.withLock { $0 } }
        set { shared.clipOpen.withLock { $0 = newValue } }
    }

    /// Queues a frame (copied). False when left out at the encoder's pace or the queue is
    /// full (counted), or after an error.
    @discardableResult
    public func append(_ frame: Frame) -> Bool { queue.push(frame: frame).accepted }

    /// Why the encoder stopped, if it did.
    public var error: String? { shared.failure.withLock { $0 } }

    public var framesDropped: Int { queue.framesDroppedNow }

    /// Stops the thread after the queued frames (packets still go to `onPacket`).
    public func stop() { queue.finish() }

    deinit { queue.finish() }
}

/// What the encoder thread and its owner share.
private final class EncoderShared: Sendable {
    let clipOpen = Mutex(false)
    let failure = Mutex<String?>(nil)
}

/// The encoder thread's state.
private final class EncoderLoop {
    let settings: RecordingSettings
    let scaledTo: PixelSize?
    let queue: RecordingQueue
    let shared: EncoderShared
    let onPacket: @Sendable (EncodedPacket) -> Void
    var source: PacketSource?
    var epoch = MonotonicTime(nanoseconds: 0)
    var framesSinceKey = Int.max
    /// The newest keyframe's pts (1/90000 s), forced or the encoder's own.
    var lastKeyPTS = Int64.min
    /// The keyframe interval on the pts clock: the encoder's own count of frames at `fps`.
    var keyTicks: Int64 { Int64(settings.keyframeFrames) * 90_000 / Int64(max(1, settings.fps)) }
    /// Frames sent and not yet out of the encoder: pts → capture times.
    var inFlight: [(pts: Int64, time: MonotonicTime, exposure: MonotonicTime)] = []

    init(settings: RecordingSettings, scaledTo: PixelSize?, queue: RecordingQueue, shared: EncoderShared,
         onPacket: @escaping @Sendable (EncodedPacket) -> Void) {
        self.settings = settings
        self.scaledTo = scaledTo
        self.queue = queue
        self.shared = shared
        self.onPacket = onPacket
    }

    func run() {
        let idleKey = PrerollEncoder.idleKeyframeFrames(fps: settings.fps)
        while let item = queue.pop() {
            guard case .video(let frame) = item else { continue }
            var opened = false
            defer { queue.recycle(frame, measured: !opened) }
            if shared.failure.withLock({ $0 }) != nil { continue }
            do {
                opened = source.map { $0.width != frame.width || $0.height != frame.height || $0.format != frame.format } ?? true
                try encode(frame, idleKey: idleKey)
            } catch {
                shared.failure.withLock { $0 = "\(error)" }
                RecordingLog.error("pre-roll encoder: \(error)")
                queue.fail(error)
            }
        }
        queue.complete(RecordingSummary())
    }

    private func encode(_ frame: QueuedFrame, idleKey: Int) throws(RecordingError) {
        if let s = source, s.width != frame.width || s.height != frame.height || s.format != frame.format {
            source = nil  // a new size (camera switch): a new encoder; the ring starts again at its first keyframe
        }
        if source == nil {
            source = try open(first: frame)
            epoch = frame.timestamp
            framesSinceKey = Int.max
            lastKeyPTS = .min
            inFlight.removeAll()
            queue.fillPoolWhileIdle(byteCount: frame.buffer.capacity)
        }
        let src = source!
        let pts = (frame.timestamp - epoch).nanoseconds * 9 / 100_000
        if let last = inFlight.last, pts <= last.pts { return }
        framesSinceKey = framesSinceKey == Int.max ? Int.max : framesSinceKey + 1
        let force = shared.clipOpen.withLock({ $0 })
            ? lastKeyPTS != .min && pts - lastKeyPTS >= keyTicks
            : framesSinceKey >= idleKey
        if force { lastKeyPTS = pts }
        let r = SegmentFile.withPlanes(of: frame) { p, s in sav_encoder_video(src.raw, p, s, pts, force ? 1 : 0) }
        if r < 0 { throw RecordingError(.encoderFailed, "the pre-roll encoder failed (code \(r))") }
        inFlight.append((pts, frame.timestamp, frame.exposureStart))
        while let raw = sav_encoder_take(src.raw) {
            let p = sav_packet_pts(raw)
            while let f = inFlight.first, f.pts < p { inFlight.removeFirst() }
            guard let f = inFlight.first, f.pts == p else { sav_packet_free(raw); continue }
            inFlight.removeFirst()
            let packet = EncodedPacket(raw: raw, source: src, time: f.time, exposureStart: f.exposure)
            if packet.isKey { framesSinceKey = 0; lastKeyPTS = max(lastKeyPTS, p) }
            onPacket(packet)
        }
    }

    private func open(first: QueuedFrame) throws(RecordingError) -> PacketSource {
        var cfg = SegmentFile.config(settings: settings, width: first.width, height: first.height,
                                     format: first.format)
        if let size = scaledTo {
            // Only ever smaller: a larger size would cost more than the camera's own stream.
            if size.fits(in: PixelSize(width: first.width, height: first.height)) {
                cfg.out_width = Int32(size.width)
                cfg.out_height = Int32(size.height)
                // The bit rate by the picture's area: the point of the smaller stream is fewer bytes.
                cfg.video_bitrate = cfg.video_bitrate * Int64(size.width * size.height)
                    / Int64(first.width * first.height)
            } else {
                RecordingLog.error("live.size \(size) is larger than the video (\(first.width)x\(first.height)): "
                                   + "the live viewers get the video size")
            }
        }
        var errbuf = [CChar](repeating: 0, count: 256)
        var e: OpaquePointer?
        let r = settings.videoEncoder.withCString { enc in
            settings.preset.withCString { preset in
                cfg.video_encoder = enc
                cfg.preset = preset
                return sav_encoder_open(&cfg, &e, &errbuf, errbuf.count)
            }
        }
        guard r >= 0, let e else {
            let detail = String(decoding: errbuf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw RecordingError(.encoderFailed, "the pre-roll encoder would not open: \(detail)")
        }
        return PacketSource(raw: e, width: first.width, height: first.height, format: first.format)
    }
}
