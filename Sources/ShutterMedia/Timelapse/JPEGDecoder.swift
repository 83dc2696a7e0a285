// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import CTurboJPEG
import ShutterCore

/// A photo back to pixels, for a time-lapse: libjpeg-turbo decodes it to packed RGB, at the
/// smallest of its DCT scalings (1/8 ... 1) that is still at least the size asked for, so a
/// 12 MP photo for a 1080p film is decoded at half size (a quarter of the work) and only the
/// last step is left to swscale. One handle, reused; for one thread at a time.
final class JPEGDecoder {
    struct Picture {
        var rgb: [UInt8]
        var width: Int
        var height: Int
    }

    private let handle: tjhandle

    init() throws(TimelapseError) {
        guard let h = tjInitDecompress() else {
            throw TimelapseError(.decodeFailed, "libjpeg-turbo could not start: \(String(cString: tjGetErrorStr2(nil)))")
        }
        handle = h
    }

    deinit { tjDestroy(handle) }

    /// The photo's size from its header, nil when it is no JPEG libjpeg-turbo reads.
    func size(_ jpeg: [UInt8]) -> PixelSize? {
        var w: Int32 = 0, h: Int32 = 0, sub: Int32 = 0, space: Int32 = 0
        let r = jpeg.withUnsafeBufferPointer { b in
            tjDecompressHeader3(handle, b.baseAddress, UInt(b.count), &w, &h, &sub, &space)
        }
        guard r == 0, w > 0, h > 0 else { return nil }
        return PixelSize(width: Int(w), height: Int(h))
    }

    /// The photo as RGB, scaled by libjpeg-turbo to at least `target` where it can.
    func decode(_ jpeg: [UInt8], atLeast target: PixelSize, name: String) throws(TimelapseError) -> Picture {
        guard let full = size(jpeg) else {
            throw TimelapseError(.decodeFailed, "\(name) is not a JPEG libjpeg-turbo can read")
        }
        let scaled = Self.scaledSize(full, atLeast: target)
        var rgb = [UInt8](repeating: 0, count: scaled.width * scaled.height * 3)
        let r = jpeg.withUnsafeBufferPointer { src in
            rgb.withUnsafeMutableBufferPointer { dst in
                tjDecompress2(handle, src.baseAddress, UInt(src.count), dst.baseAddress, Int32(scaled.width),
                              Int32(scaled.width * 3), Int32(scaled.height), Int32(TJPF_RGB.rawValue), 0)
            }
        }
        // A warning (a truncated photo decoded in part) is an error here too: no grey frames in a film.
        guard r == 0 else {
            throw TimelapseError(.decodeFailed, "\(name) does not decode: \(String(cString: tjGetErrorStr2(handle)))")
        }
        return Picture(rgb: rgb, width: scaled.width, height: scaled.height)
    }

    /// The smallest of libjpeg-turbo's scalings of `full` that covers `target` in both
    /// directions; the full size when none does (the film is larger than the photo).
    static func scaledSize(_ full: PixelSize, atLeast target: PixelSize) -> PixelSize {
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count) else { return full }
        var best = full
        for i in 0..<Int(count) {
            let f = factors[i]
            // TJSCALED: ceil(dimension * num / denom).
            let w = (full.width * Int(f.num) + Int(f.denom) - 1) / Int(f.denom)
            let h = (full.height * Int(f.num) + Int(f.denom) - 1) / Int(f.denom)
            if w >= target.width, h >= target.height, w * h < best.width * best.height {
                best = PixelSize(width: w, height: h)
            }
        }
        return best
    }
}
