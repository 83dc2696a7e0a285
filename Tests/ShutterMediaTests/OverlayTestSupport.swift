// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import XCTest
@testable import ShutterMedia

/// A time stamp on a known clock, and the pictures the tests compare.
enum OverlayFixture {
    static let font = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
    /// 2026-06-01 12:00:00 UTC: the frame at `start` was exposed then.
    static let epoch: Int64 = 1_780_315_200
    static let start = MonotonicTime(nanoseconds: 1_000_000_000_000)

    static func overlay(name: String = "Shed", trusted: Bool = true, size: Int = 6,
                        position: ShutterConfig.Overlay.Position = .bottomRight,
                        work: InFlight? = nil) throws -> TextOverlay {
        let wall = FixedWallClock(WallTime(secondsSinceEpoch: epoch, isTrusted: trusted))
        let style = TextOverlay.Style(format: "%Y-%m-%d %H:%M:%S", name: name, position: position, sizePercent: size)
        return TextOverlay(style: style, font: try OverlayFont(path: font), clock: ManualClock(start: start),
                           wallClock: wall, work: work)
    }

    /// The same place, a stamp that changes nothing (no ink, no box): the encoder's stamped
    /// path with the picture as it was, to compare byte for byte around the stamp.
    static func blank(like p: OverlayStamp.Placed) -> OverlayStamp.Placed {
        let s = p.stamp
        return OverlayStamp.Placed(stamp: OverlayStamp(text: "", width: s.width, height: s.height,
                                                       alpha: [UInt8](repeating: 0, count: s.width * s.height), box: 0),
                                   x: p.x, y: p.y)
    }

    /// The luma of a 4:2:0 frame, tight (`width` x `height`).
    static func luma(_ f: Frame) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: f.width * f.height)
        let p = f.planes[0]
        for r in 0..<f.height {
            for x in 0..<f.width { out[r * f.width + x] = p.base.load(fromByteOffset: r * p.stride + x, as: UInt8.self) }
        }
        return out
    }

    /// `frame`'s luma with the stamp's bitmap laid over it as docs/overlay.md says (written
    /// here again, not the service's blend): the box keeps (255 - box) / 255 of the luma,
    /// then ink of coverage a moves it a / 255 of the way to white (235).
    static func expectedLuma(_ f: Frame, _ p: OverlayStamp.Placed) -> [UInt8] {
        var out = luma(f)
        let s = p.stamp
        for r in 0..<s.height {
            for c in 0..<s.width {
                let i = (p.y + r) * f.width + p.x + c
                let a = Int(s.alpha[r * s.width + c])
                let boxed = (Int(out[i]) * (255 - s.box) + 127) / 255
                out[i] = UInt8(boxed + ((235 - boxed) * a + 127) / 255)
            }
        }
        return out
    }

    /// A JPEG's luma as ffmpeg decodes it (yuvj420p: the planes as stored, no conversion).
    static func decodeJPEGLuma(_ jpeg: [UInt8], width: Int, height: Int, dir: String, name: String) throws -> [UInt8] {
        Array(try decodeJPEG(jpeg, dir: dir, name: name).prefix(width * height))
    }

    /// All three planes (Y, then U, then V) as ffmpeg decodes the JPEG.
    static func decodeJPEG(_ jpeg: [UInt8], dir: String, name: String) throws -> [UInt8] {
        let path = dir + "/\(name).jpg"
        try Data(jpeg).write(to: URL(fileURLWithPath: path))
        let r = try StillTools.run(["ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "yuvj420p", "-"])
        XCTAssertEqual(r.status, 0, r.err)
        return [UInt8](r.out)
    }

    /// Mean absolute difference over a rectangle (or everywhere outside it).
    static func meanDiff(_ a: [UInt8], _ b: [UInt8], width: Int, height: Int, x: Range<Int>, y: Range<Int>,
                         outside: Bool = false) -> Double {
        var sum = 0, n = 0
        for r in 0..<height {
            for c in 0..<width where (x.contains(c) && y.contains(r)) != outside {
                sum += abs(Int(a[r * width + c]) - Int(b[r * width + c]))
                n += 1
            }
        }
        return n == 0 ? 0 : Double(sum) / Double(n)
    }
}
