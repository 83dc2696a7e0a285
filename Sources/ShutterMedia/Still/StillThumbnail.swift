// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// The EXIF thumbnail's pixels: a small I420 image made by sampling the frame's
/// planes (nearest neighbour), so it costs ~160x120 reads, not a pass over 12 MP.
enum StillThumbnail {
    /// Thumbnail size keeping the frame's aspect, longest side `maxSide`, even
    /// dimensions (I420 without odd edges).
    static func size(width: Int, height: Int, maxSide: Int) -> (width: Int, height: Int) {
        func even(_ v: Int) -> Int { max(2, v & ~1) }
        if width >= height {
            let tw = even(min(maxSide, width))
            return (tw, even(Int((Double(tw) * Double(height) / Double(width)).rounded())))
        }
        let th = even(min(maxSide, height))
        return (even(Int((Double(th) * Double(width) / Double(height)).rounded())), th)
    }

    static func byteCount(width: Int, height: Int) -> Int { width * height * 3 / 2 }

    /// Fills `out` (tightly packed I420, `tw` x `th`) from `frame`, whose planes
    /// were already validated by `StillEncoder`.
    static func sample(_ frame: Frame, into out: UnsafeMutablePointer<UInt8>, width tw: Int, height th: Int) {
        let w = frame.width, h = frame.height
        let outY = out, outU = out + tw * th, outV = outU + (tw / 2) * (th / 2)
        let p = frame.planes.map { $0.base.assumingMemoryBound(to: UInt8.self) }
        let s = frame.planes.map(\.stride)
        for ty in 0..<th {
            let sy = min(h - 1, ty * h / th)
            for tx in 0..<tw {
                let sx = min(w - 1, tx * w / tw)
                let chromaHere = (tx & 1) == 0 && (ty & 1) == 0
                let ci = (ty / 2) * (tw / 2) + tx / 2
                switch frame.format {
                case .i420:
                    outY[ty * tw + tx] = p[0][sy * s[0] + sx]
                    if chromaHere {
                        outU[ci] = p[1][(sy / 2) * s[1] + sx / 2]
                        outV[ci] = p[2][(sy / 2) * s[2] + sx / 2]
                    }
                case .nv12:
                    outY[ty * tw + tx] = p[0][sy * s[0] + sx]
                    if chromaHere {
                        outU[ci] = p[1][(sy / 2) * s[1] + (sx / 2) * 2]
                        outV[ci] = p[1][(sy / 2) * s[1] + (sx / 2) * 2 + 1]
                    }
                case .yuyv:
                    let row = p[0] + sy * s[0]
                    outY[ty * tw + tx] = row[sx * 2]
                    if chromaHere {
                        outU[ci] = row[(sx / 2) * 4 + 1]
                        outV[ci] = row[(sx / 2) * 4 + 3]
                    }
                case .rgb24, .bgr24:
                    let px = p[0] + sy * s[0] + sx * 3
                    let (r, b) = frame.format == .rgb24 ? (Double(px[0]), Double(px[2]))
                                                        : (Double(px[2]), Double(px[0]))
                    let g = Double(px[1])
                    // JFIF (full-range BT.601) conversion: a thumbnail-only cost.
                    outY[ty * tw + tx] = clamp(0.299 * r + 0.587 * g + 0.114 * b)
                    if chromaHere {
                        outU[ci] = clamp(128 - 0.168736 * r - 0.331264 * g + 0.5 * b)
                        outV[ci] = clamp(128 + 0.5 * r - 0.418688 * g - 0.081312 * b)
                    }
                }
            }
        }
    }

    private static func clamp(_ v: Double) -> UInt8 { UInt8(min(255, max(0, v.rounded()))) }
}
