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
import Dispatch

/// One viewer's fragmented MP4 of the encoder's packets (the web page's `/api/live.mp4`):
/// `header` is the init segment (ftyp + moov); each `append` gives a fragment (moof +
/// mdat) of one frame. Starts at a keyframe; a new encoder (camera switch) needs a new
/// muxer. Not thread-safe: one owner.
public final class LiveMP4Muxer {
    public let source: PacketSource
    public private(set) var header = Data()
    private let raw: OpaquePointer
    private let sink: Sink

    /// Bytes the muxer wrote since they were last taken.
    private final class Sink {
        var data = Data()
    }

    /// Nil when the muxer would not open (no MP4 muxer in this FFmpeg).
    public init?(source: PacketSource) {
        self.source = source
        let sink = Sink()
        self.sink = sink
        var l: OpaquePointer?
        let r = sav_live_open(source.raw, { ctx, data, len in
            guard let ctx, let data else { return -1 }
            Unmanaged<Sink>.fromOpaque(ctx).takeUnretainedValue().data.append(data, count: len)
            return 0
        }, Unmanaged.passUnretained(sink).toOpaque(), &l)
        guard r >= 0, let l else { return nil }
        raw = l
        header = sink.data
        sink.data = Data()
    }

    /// The fragment of `packet` (from the same encoder); empty when it cannot go in
    /// (a time not after the last, another encoder).
    public func append(_ packet: EncodedPacket) -> Data {
        guard packet.source === source, sav_live_packet(raw, packet.raw, packet.pts90k) >= 0 else {
            sink.data = Data()
            return Data()
        }
        defer { sink.data = Data() }
        return sink.data
    }

    deinit { sav_live_free(raw) }
}
