// SPDX-License-Identifier: BSD-2-Clause
import CShutterAV
import ShutterCore

/// One open pre-roll video encoder: its packets can only go into a file whose video
/// track has this encoder's parameters, so each packet keeps its encoder alive.
// Unchecked: wraps an FFmpeg encoder, fed on its thread only; others read its fixed parameters.
public final class PacketSource: @unchecked Sendable {
    let raw: OpaquePointer
    public let width: Int
    public let height: Int
    public let format: PixelFormat

    init(raw: OpaquePointer, width: Int, height: Int, format: PixelFormat) {
        self.raw = raw
        self.width = width
        self.height = height
        self.format = format
    }

    deinit { sav_encoder_free(raw) }
}

/// An encoded video packet held by reference (an AVPacket; copies share its data).
// Unchecked: wraps an AVPacket, never changed once made; libav's refcount is atomic.
public final class EncodedPacket: PrerollPacket, @unchecked Sendable {
    let raw: OpaquePointer
    public let source: PacketSource
    public let time: MonotonicTime
    public let exposureStart: MonotonicTime
    public let isKey: Bool
    public let bytes: Int

    init(raw: OpaquePointer, source: PacketSource, time: MonotonicTime, exposureStart: MonotonicTime) {
        self.raw = raw
        self.source = source
        self.time = time
        self.exposureStart = exposureStart
        isKey = sav_packet_is_key(raw) != 0
        bytes = Int(sav_packet_size(raw))
    }

    deinit { sav_packet_free(raw) }
}
