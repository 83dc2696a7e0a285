// SPDX-License-Identifier: BSD-2-Clause
// The time stamp's cost (docs/overlay.md), in the same run as its references: per 1080p
// frame, the stamp of a second already rendered (the lookup and the blend into the
// encoder's copy) against copying the frame (what every encoder's queue does per frame
// anyway); a second's render (FreeType, once per second, ahead of its frames) against the
// same copy; per 12 MP still, the JPEG with the stamp against the same JPEG without it, and
// the stamp's blend alone against that JPEG.
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterMedia

enum OverlayBench {
    static let font = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"

    static func clock() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    static func median(_ xs: [Double]) -> Double {
        let s = xs.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    static func line(_ name: String, _ value: Double, _ unit: String, _ reference: Double) -> String {
        func f(_ x: Double) -> String { String(Double((x * 1000).rounded()) / 1000) }
        return "{\"bench\":\"\(name)\",\"value\":\(f(value)),\"unit\":\"\(unit)\",\"reference\":\(f(reference)),"
            + "\"ratio\":\(f(value / reference))}"
    }

    /// The default style (4%, bottom right, a name and the time) on a trusted clock.
    static func overlay() throws -> (TextOverlay, OverlayFont) {
        let font = try OverlayFont(path: font)
        let style = TextOverlay.Style(format: "%Y-%m-%d %H:%M:%S", name: "Shed", position: .bottomRight, sizePercent: 4)
        let wall = FixedWallClock(WallTime(secondsSinceEpoch: 1_780_315_200, isTrusted: true))
        return (TextOverlay(style: style, font: font, clock: ManualClock(start: .milliseconds(1_000_000)), wallClock: wall), font)
    }

    /// JSON lines: overlay_frame_1080p, overlay_render_1080p (µs), overlay_still_12mp (ms).
    static func run(still: Frame, encoder: StillEncoder, metadata: StillMetadata, iterations: Int) throws -> [String] {
        let (overlay, font) = try overlay()
        let w = 1920, h = 1080, bytes = Frame.i420ByteCount(width: w, height: h)
        let source = OwnedFrameBuffer(capacity: bytes), copy = OwnedFrameBuffer(capacity: bytes)
        let s = source.bytes.assumingMemoryBound(to: UInt8.self)
        for i in 0..<bytes { s[i] = UInt8(truncatingIfNeeded: (i &* 2654435761) >> 13) }
        let planes = [copy.bytes, copy.bytes + w * h, copy.bytes + w * h + w * h / 4]
        let strides = [w, w / 2, w / 2]
        let t = MonotonicTime.milliseconds(1_000_000)
        _ = overlay.placed(at: t, width: w, height: h)  // the second rendered (as ahead of its frames)
        var copyUs: [Double] = [], stampUs: [Double] = [], renderUs: [Double] = []
        for i in 0..<300 {
            let t0 = clock()
            copy.bytes.copyMemory(from: source.bytes, byteCount: bytes)
            let t1 = clock()
            if let p = overlay.placed(at: t, width: w, height: h) {
                OverlayStamp.draw(p, format: .i420, planes: planes, strides: strides)
            }
            let t2 = clock()
            copyUs.append(Double(t1 - t0) / 1e3)
            stampUs.append(Double(t2 - t1) / 1e3)
            if i < 30 {
                let r0 = clock()
                _ = font.render("Shed  2026-06-01 12:00:\(10 + i)", pixelHeight: 43, pad: 8, box: 128)
                renderUs.append(Double(clock() - r0) / 1e3)
            }
        }
        precondition(overlay.figures.misses == 1, "the bench's frames were to find their second rendered")
        let copyRef = median(copyUs)
        var out = [line("overlay_frame_1080p", median(stampUs), "us", copyRef),
                   line("overlay_render_1080p", median(renderUs), "us", copyRef)]

        // 12 MP: the stamp's rows copied and blended, the rest read in place; against no stamp.
        let stamp = try unwrap(overlay.placed(at: t, width: still.width, height: still.height))
        _ = try encoder.encode(still, metadata: metadata, stamp: stamp)
        var plainMs: [Double] = [], stampedMs: [Double] = []
        for _ in 0..<iterations {
            let t0 = clock()
            _ = try encoder.encode(still, metadata: metadata)
            let t1 = clock()
            _ = try encoder.encode(still, metadata: metadata, stamp: stamp)
            let t2 = clock()
            plainMs.append(Double(t1 - t0) / 1e6)
            stampedMs.append(Double(t2 - t1) / 1e6)
        }
        out.append(line("overlay_still_12mp", median(stampedMs), "ms", median(plainMs)))
        // The stamp's own work in a still, alone: its blend into a copy of the 12 MP frame.
        let big = OwnedFrameBuffer(capacity: still.planes.reduce(0) { $0 + $1.length })
        var bases: [UnsafeMutableRawPointer] = []
        var offset = 0
        for plane in still.planes {
            (big.bytes + offset).copyMemory(from: plane.base, byteCount: plane.length)
            bases.append(big.bytes + offset)
            offset += plane.length
        }
        var blendUs: [Double] = []
        for _ in 0..<50 {
            let t0 = clock()
            OverlayStamp.draw(stamp, format: still.format, planes: bases, strides: still.planes.map(\.stride))
            blendUs.append(Double(clock() - t0) / 1e3)
        }
        out.append(line("overlay_blend_12mp", median(blendUs), "us", median(plainMs) * 1000))
        return out
    }

    struct Missing: Error {}
    static func unwrap<T>(_ x: T?) throws -> T {
        guard let x else { throw Missing() }
        return x
    }
}
