// SPDX-License-Identifier: BSD-2-Clause
import CShutterOverlay
import ShutterCore

/// One rendered text: FreeType's 8-bit alpha bitmap (0 clear, 255 ink) with its margin,
/// the box behind it. Made once per second and size, then only blended (`draw`).
public final class OverlayStamp: Sendable {
    public let text: String
    public let width: Int
    public let height: Int
    /// Row after row, `width` x `height`.
    public let alpha: [UInt8]
    /// How much the box darkens the picture behind the text, 0...255.
    public let box: Int

    public init(text: String, width: Int, height: Int, alpha: [UInt8], box: Int) {
        precondition(alpha.count == width * height && width % 2 == 0 && height % 2 == 0, "stamp \(width)x\(height)")
        self.text = text
        self.width = width
        self.height = height
        self.alpha = alpha
        self.box = box
    }

    /// The stamp at a place in a picture of some size.
    public struct Placed: Sendable {
        public let stamp: OverlayStamp
        /// Top-left corner, both even.
        public let x: Int
        public let y: Int
        public init(stamp: OverlayStamp, x: Int, y: Int) {
            precondition(x % 2 == 0 && y % 2 == 0 && x >= 0 && y >= 0, "stamp at \(x),\(y)")
            self.stamp = stamp
            self.x = x
            self.y = y
        }

        /// Whether it fits a `width` x `height` picture (the blend never writes outside).
        public func fits(width: Int, height: Int) -> Bool {
            x + stamp.width <= width && y + stamp.height <= height
        }
    }

    /// The corner's place in a `width` x `height` picture, `margin` from its edges (even).
    public func placed(at position: ShutterConfig.Overlay.Position, width: Int, height: Int, margin: Int) -> Placed? {
        let m = margin & ~1
        guard self.width + 2 * m <= width, self.height + 2 * m <= height else { return nil }
        let left = position == .topLeft || position == .bottomLeft
        let top = position == .topLeft || position == .topRight
        let x = left ? m : (width - m - self.width) & ~1
        let y = top ? m : (height - m - self.height) & ~1
        return Placed(stamp: self, x: x, y: y)
    }

    /// Blends into YUV 4:2:0 planes: `y` starts at the stamp's first row (picture row
    /// `placed.y`), `u`/`v` at its chroma row; NV12 when `interleaved` (`u` the UV plane).
    static func blend(_ p: Placed, y: UnsafeMutablePointer<UInt8>, yStride: Int, u: UnsafeMutablePointer<UInt8>,
                      v: UnsafeMutablePointer<UInt8>?, cStride: Int, interleaved: Bool) {
        let s = p.stamp
        s.alpha.withUnsafeBufferPointer { a in
            shutter_overlay_blend(a.baseAddress, Int32(s.width), Int32(s.height), Int32(s.box), y, Int32(yStride),
                                  u, v, Int32(cStride), interleaved ? 1 : 0, Int32(p.x))
        }
    }

    /// Blends into a whole picture whose planes start at `planes`: 4:2:0 (Y, then U and V or
    /// UV), or packed RGB, BGR or YUYV (one plane).
    public static func draw(_ p: Placed, format: PixelFormat, planes: [UnsafeMutableRawPointer], strides: [Int]) {
        switch format {
        case .i420 where planes.count >= 3 && strides[1] == strides[2]:  // one chroma stride (the blend's)
            blend(p, y: (planes[0] + p.y * strides[0]).assumingMemoryBound(to: UInt8.self), yStride: strides[0],
                  u: (planes[1] + p.y / 2 * strides[1]).assumingMemoryBound(to: UInt8.self),
                  v: (planes[2] + p.y / 2 * strides[2]).assumingMemoryBound(to: UInt8.self), cStride: strides[1],
                  interleaved: false)
        case .nv12 where planes.count >= 2:
            blend(p, y: (planes[0] + p.y * strides[0]).assumingMemoryBound(to: UInt8.self), yStride: strides[0],
                  u: (planes[1] + p.y / 2 * strides[1]).assumingMemoryBound(to: UInt8.self), v: nil,
                  cStride: strides[1], interleaved: true)
        case .rgb24, .bgr24, .yuyv:
            let s = p.stamp
            s.alpha.withUnsafeBufferPointer { a in
                shutter_overlay_blend_packed(a.baseAddress, Int32(s.width), Int32(s.height), Int32(s.box),
                                             (planes[0] + p.y * strides[0]).assumingMemoryBound(to: UInt8.self),
                                             Int32(strides[0]), Int32(p.x), format == .yuyv ? 1 : 0)
            }
        default:
            break  // an I420 frame whose U and V strides differ: none known
        }
    }
}
