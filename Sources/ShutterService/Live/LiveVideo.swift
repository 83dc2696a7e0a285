// SPDX-License-Identifier: BSD-2-Clause
import Dispatch
import ShutterControl
import ShutterCore
import ShutterMedia
import Synchronization

/// Who takes the live packets: the RTSP server, the page's MP4 viewers.
protocol LiveConsumer: AnyObject, Sendable {
    /// Someone watches (or a stream is being set up): packets are wanted.
    var watched: Bool { get }
    /// On the live queue, in order.
    func deliver(_ packet: EncodedPacket)
    func deliver(_ audio: AudioChunk)
    /// The microphone runs with this format (every chunk, watched or not; cheap).
    func hear(sampleRate: Int, channels: Int)
    func figures(into c: inout ServiceStatus.LiveCounters)
}

/// One encoder, several consumers: the live viewers get the packets of the encoder that
/// pre-roll keeps running (`received`, from ClipRecorder); with pre-roll off, an encoder
/// of its own that runs only while someone watches (`offer`). Packets reach the
/// consumers on a queue of their own: the encoder's thread never waits for a viewer, and
/// when the queue is behind the viewers lose frames up to the next keyframe, never a clip.
/// With `live.size` the viewers get a smaller stream instead: always the encoder of its own,
/// fed frames it scales down on its thread (a full queue drops the viewers' frames), while
/// pre-roll and clips keep the full-size encoder.
final class LiveVideo: Sendable {
    /// Packets waiting for the consumers before the newest are dropped (~0.25 s at 30 fps).
    static let maxBacklog = 8
    /// With no one watching this long, its own encoder stops.
    static let idleStop = Duration.seconds(2)

    private let consumers = Mutex<[any LiveConsumer]>([])
    private let queue = DispatchQueue(label: "shutter.live", qos: .userInitiated)
    private let flow = Mutex(Flow())
    /// Its own encoder when pre-roll is off or `live.size` is set (nil settings: pre-roll feeds it).
    private let ownSettings: RecordingSettings?
    /// `live.size`: what its own encoder scales the frames down to; nil = the frames' size.
    private let size: PixelSize?
    private let own = Mutex<(encoder: PrerollEncoder?, lastWatched: MonotonicTime?)>((nil, nil))

    private struct Flow {
        var backlog = 0
        var skipToKey = false
        var dropped = 0
    }

    /// `preroll`: pre-roll's encoder runs and feeds `received`.
    /// `overlay`: the time stamp, drawn into its own encoder's frames (pre-roll's has it too).
    init(config: ShutterConfig, preroll: Bool, overlay: TextOverlay? = nil) {
        size = PixelSize(parsing: config.live.size)  // validated with the configuration; "" = nil
        var own = Self.settings(config)
        own.overlay = overlay
        ownSettings = preroll && size == nil ? nil : own
    }

    /// The clip recorder's settings (ClipSession) for the live encoder of its own.
    static func settings(_ c: ShutterConfig) -> RecordingSettings {
        var s = RecordingSettings(
            videoEncoder: c.video.encoder.rawValue, preset: c.video.preset, fps: c.video.fps,
            videoBitrate: c.video.bitrateKbps * 1000, audioChannels: 0,
            audioSampleRate: c.audio.sampleRate, audioBitrate: c.audio.bitrateKbps * 1000,
            segmentSeconds: Double(c.video.segmentSeconds))
        s.keyframeInterval = .milliseconds(Int64(c.video.keyframeIntervalMs))
        return s
    }

    func add(_ c: any LiveConsumer) { consumers.withLock { $0.append(c) } }
    func remove(_ c: any LiveConsumer) { consumers.withLock { $0.removeAll { $0 === c } } }

    var watched: Bool { consumers.withLock { $0 }.contains { $0.watched } }

    /// A camera frame (the loop): to its own encoder while someone watches.
    func offer(_ frame: Frame, now: MonotonicTime) {
        guard let settings = ownSettings else { return }
        let watched = self.watched
        let (encoder, stop) = own.withLock { o -> (PrerollEncoder?, PrerollEncoder?) in
            if watched {
                o.lastWatched = now
                if o.encoder == nil {
                    o.encoder = PrerollEncoder(settings: settings, scaledTo: size, niceness: 10) { [weak self] p in
                        self?.queued(p)
                    }
                }
                return (o.encoder, nil)
            }
            guard let e = o.encoder, let last = o.lastWatched, now - last >= Self.idleStop else { return (nil, nil) }
            o.encoder = nil
            return (nil, e)
        }
        encoder?.append(frame)
        stop?.stop()
    }

    /// A packet of pre-roll's encoder (its thread): the viewers' unless they get their own size.
    func received(_ p: EncodedPacket) {
        if size == nil { queued(p) }
    }

    /// An encoded packet (an encoder's thread): queued for the consumers, or dropped.
    private func queued(_ p: EncodedPacket) {
        guard watched else { return }
        let take = flow.withLock { f -> Bool in
            if f.backlog >= Self.maxBacklog { f.skipToKey = true }
            if f.skipToKey && (!p.isKey || f.backlog >= Self.maxBacklog) {
                f.dropped += 1
                return false
            }
            f.skipToKey = false
            f.backlog += 1
            return true
        }
        guard take else { return }
        queue.async { [self] in
            for c in consumers.withLock({ $0 }) { c.deliver(p) }
            flow.withLock { $0.backlog -= 1 }
        }
    }

    /// Microphone sound (its thread): for the consumers that carry audio.
    func offer(_ audio: AudioChunk) {
        let all = consumers.withLock { $0 }
        for c in all { c.hear(sampleRate: audio.sampleRate, channels: audio.channels) }
        guard all.contains(where: \.watched), flow.withLock({ $0.backlog < Self.maxBacklog }) else { return }
        queue.async { [self] in for c in consumers.withLock({ $0 }) { c.deliver(audio) } }
    }

    var counters: ServiceStatus.LiveCounters {
        var c = ServiceStatus.LiveCounters()
        for consumer in consumers.withLock({ $0 }) { consumer.figures(into: &c) }
        c.ownEncoder = own.withLock { $0.encoder != nil }
        return c
    }

    /// Stops its own encoder (the service stops).
    func stop() {
        own.withLock { o in defer { o.encoder = nil }; return o.encoder }?.stop()
    }
}
