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
import Synchronization

/// Small JPEGs of video frames: the web page's live preview (~640 px) and a
/// clip's poster frame (`.THM`, 160 px). Sampled like the EXIF thumbnail
/// (nearest neighbour, a few hundred thousand reads at most), then one
/// libjpeg-turbo call. Its own handle: never contends with the photo encoder.
public final class PreviewEncoder: Sendable {
    /// The handle and its scratch pixels, used for a whole encode under the lock.
    private struct Workspace: ~Copyable {
        let handle: tjhandle
        var pixels: [UInt8] = []
        init(handle: tjhandle) { self.handle = handle }
        deinit { tjDestroy(handle) }
    }
    private let workspace: Mutex<Workspace>

    public init() throws {
        guard let h = tjInitCompress() else { throw MediaError(.encoderFailed, "libjpeg-turbo could not start") }
        workspace = Mutex(Workspace(handle: h))
    }

    /// The frame scaled to at most `maxSide` pixels on its longer side, as a JPEG.
    public func encode(_ frame: Frame, maxSide: Int, quality: Int = 70) throws -> [UInt8] {
        try workspace.withLock { ws -> [UInt8] in
            try StillEncoder.validate(frame)
            let (w, h) = StillThumbnail.size(width: frame.width, height: frame.height, maxSide: maxSide)
            let count = StillThumbnail.byteCount(width: w, height: h)
            if ws.pixels.count < count { ws.pixels = [UInt8](repeating: 0, count: count) }
            let handle = ws.handle
            return try ws.pixels.withUnsafeMutableBufferPointer { buf -> [UInt8] in
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
}
