// SPDX-License-Identifier: BSD-2-Clause
import CShutterRTSP
import ShutterControl
import ShutterCore
import ShutterMedia
import Synchronization

/// The RTSP server (CShutterRTSP, GStreamer's RTSP server library) as a live consumer:
/// rtsp://HOST:PORT/live, H.264 from the live packets (SPS and PPS before each keyframe),
/// AAC from the microphone's samples once it runs.
// Unchecked: wraps the CShutterRTSP server handle, whose calls lock (any thread may make them).
final class RTSPServer: LiveConsumer, @unchecked Sendable {
    private let raw: OpaquePointer
    private let access: AccessBox
    let port: Int
    private let lock = Mutex<(source: PacketSource?, header: [UInt8], audio: (rate: Int, channels: Int)?)>((nil, [], nil))

    /// Holds the password check (password, peer address) for the shim's callbacks, and its log.
    final class AccessBox: Sendable {
        let accepts: @Sendable (String, String) -> Bool
        let log = Log("shutter.rtsp")
        init(_ accepts: @escaping @Sendable (String, String) -> Bool) { self.accepts = accepts }
    }

    struct StartError: Error, CustomStringConvertible {
        let description: String
    }

    /// `accepts`: whether a Basic password from a peer address may watch; nil = open (no
    /// authentication).
    /// `socket`: a listening socket systemd passed (the server takes it and closes it at its
    /// stop), used instead of `host` and `port`; RTP then goes inside the RTSP connection.
    init(host: String, port: Int, socket: Int32? = nil, maxViewers: Int, stallSeconds: Int = 10,
         accepts: (@Sendable (String, String) -> Bool)?) throws(StartError) {
        access = AccessBox(accepts ?? { _, _ in true })
        var cfg = shutter_rtsp_config()
        cfg.port = Int32(port)
        cfg.listen_fd = socket ?? 0
        cfg.max_viewers = Int32(maxViewers)
        cfg.open = accepts == nil ? 1 : 0
        cfg.stall_seconds = Int32(stallSeconds)
        cfg.check = RTSPCallbacks.check
        cfg.log = RTSPCallbacks.log
        cfg.check_context = Unmanaged.passUnretained(access).toOpaque()
        var errbuf = [CChar](repeating: 0, count: 512)
        var s: OpaquePointer?
        let r = host.withCString { h in
            "/live".withCString { path in
                cfg.host = h
                cfg.path = path
                return shutter_rtsp_start(&cfg, &s, &errbuf, errbuf.count)
            }
        }
        guard r == 0, let s else {
            throw StartError(description: String(decoding: errbuf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        raw = s
        self.port = Int(shutter_rtsp_port(s))
    }

    var watched: Bool { shutter_rtsp_watched(raw) != 0 }

    func deliver(_ packet: EncodedPacket) {
        let header = lock.withLock { l -> [UInt8] in
            if l.source !== packet.source {
                l.source = packet.source
                l.header = packet.source.header
            }
            return l.header
        }
        packet.withBytes { bytes in
            header.withUnsafeBufferPointer { h in
                shutter_rtsp_push_video(raw, h.baseAddress, h.count, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                        bytes.count, packet.isKey ? 1 : 0)
            }
        }
    }

    func hear(sampleRate: Int, channels: Int) {
        let changed = lock.withLock { l -> Bool in
            guard l.audio?.rate != sampleRate || l.audio?.channels != channels else { return false }
            l.audio = (sampleRate, channels)
            return true
        }
        // The stream made from now on carries AAC; one being played goes on as it was.
        if changed { shutter_rtsp_set_audio(raw, Int32(sampleRate), Int32(channels)) }
    }

    func deliver(_ audio: AudioChunk) {
        audio.samples.withUnsafeBufferPointer { shutter_rtsp_push_audio(raw, $0.baseAddress, $0.count) }
    }

    func figures(into c: inout ServiceStatus.LiveCounters) {
        var s = shutter_rtsp_stats()
        shutter_rtsp_get_stats(raw, &s)
        c.rtspViewers = Int(s.viewers)
        c.rtspFramesSent = Int(s.video_pushed)
        c.rtspFramesDropped = Int(s.video_dropped)
        c.rtspRefused = Int(s.refused)
        c.rtspStalledClosed = Int(s.stalled_closed)
        c.rtspConnections = Int(s.connections)
        c.rtspTurnedAway = Int(s.turned_away)
        c.rtspIdleClosed = Int(s.idle_closed)
    }

    func stop() { shutter_rtsp_stop(raw) }
}
