// SPDX-License-Identifier: BSD-2-Clause
import CShutterAV

/// What a live stream needs of the encoder and its packets: the SPS and PPS an RTSP
/// keyframe carries in band, the codec a browser's Media Source is told, the bytes.
extension PacketSource {
    /// SPS and PPS (Annex B, as libx264 gives them with global headers).
    public var header: [UInt8] {
        var p: UnsafePointer<UInt8>?
        let n = sav_encoder_header(raw, &p)
        guard n > 0, let p else { return [] }
        return Array(UnsafeBufferPointer(start: p, count: Int(n)))
    }

    /// RFC 6381 codec of the stream ("avc1.64001F").
    public var codec: String {
        var buf = [CChar](repeating: 0, count: 32)
        _ = sav_encoder_codec_string(raw, &buf, buf.count)
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension EncodedPacket {
    /// The access unit's bytes (Annex B), valid inside `body`.
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        body(UnsafeRawBufferPointer(start: sav_packet_data(raw), count: bytes))
    }

    /// The capture time on the 90 kHz clock MP4 and RTP use.
    var pts90k: Int64 { time.nanoseconds * 9 / 100_000 }
}
