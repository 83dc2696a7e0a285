// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import CTurboJPEG
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore

/// Small JPEGs of video frames: the web page's live preview (~640 px) and a
/// clip's poster frame (`.THM`, 160 px). Sampled like the EXIF thumbnail
/// (nearest neighbour, a few hundred thousand reads at most), then one
/// libjpeg-turbo call. Its own handle: never contends with the photo encoder.
public final class PreviewEncoder: @unchecked Sendable {
    // Unchecked: `lock` guards `handle` and `pixels` for a whole encode.
    private let lock = PlainLock()
    private let handle: tjhandle
    private var pixels: [UInt8] = []

    public init() throws {
        guard let h = tjInitCompress() else { throw MediaError(.encoderFailed, "libjpeg-turbo could not start") }
        handle = h
    }

    deinit { tjDestroy(handle) }

    /// The frame scaled to at most `maxSide` pixels on its longer side, as a JPEG.
    public func encode(_ frame: Frame, maxSide: Int, quality: Int = 70) throws -> [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        try StillEncoder.validate(frame)
        let (w, h) = StillThumbnail.size(width: frame.width, height: frame.height, maxSide: maxSide)
        let count = StillThumbnail.byteCount(width: w, height: h)
        if pixels.count < count { pixels = [UInt8](repeating: 0, count: count) }
        return try pixels.withUnsafeMutableBufferPointer { buf -> [UInt8] in
            let base = buf.baseAddress!
            StillThumbnail.sample(frame, into: base, width: w, height: h)
            var out = [UInt8](repeating: 0, count: Int(tjBufSize(Int32(w), Int32(h), Int32(TJSAMP_420.rawValue))))
            var size = UInt(out.count)
            var planes: [UnsafePointer<UInt8>?] = [UnsafePointer(base), UnsafePointer(base + w * h),
                                                   UnsafePointer(base + w * h + (w / 2) * (h / 2))]
            var strides: [Int32] = [Int32(w), Int32(w / 2), Int32(w / 2)]
            let r = out.withUnsafeMutableBufferPointer { ob -> Int32 in
                var p: UnsafeMutablePointer<UInt8>? = ob.baseAddress
                return planes.withUnsafeMutableBufferPointer { pp in
                    strides.withUnsafeMutableBufferPointer { sp in
                        tjCompressFromYUVPlanes(handle, pp.baseAddress, Int32(w), sp.baseAddress, Int32(h),
                                                Int32(TJSAMP_420.rawValue), &p, &size, Int32(quality), TJFLAG_NOREALLOC)
                    }
                }
            }
            guard r == 0 else { throw MediaError(.encoderFailed, "libjpeg-turbo could not encode a preview frame") }
            return Array(out.prefix(Int(size)))
        }
    }
}
