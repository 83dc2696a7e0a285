// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// Draws the simulated camera's picture into I420 planes: the scene (`SimScene`)
/// as the sensor, lens and ISP render it (`SimRender`). The top 60 % of the
/// scene is colour bars that move one step per frame; below them, on the left,
/// a white and a dark patch (to 75 %) over a neutral grey patch, and on the
/// right sharp black-and-white stripes (64 to the scene's width). The frame
/// number and the time are burned in, so a clip shows motion and any frame can
/// be identified by eye or by a test. `regions` is the same layout as auto
/// exposure meters it (`SimMetering`).
///
/// Every row of a band is the same, so a frame costs three computed rows (one
/// per band, each of `width` pixels: crop, blur, exposure, white balance, ISP)
/// and one memcpy per row.
struct TestPattern {
    let width: Int
    let height: Int

    /// The scene's rows from here down are the patches and the stripes.
    static let lowerBand = 0.6
    /// The white and dark patches' rows end here; the grey patch's begin.
    static let greyBand = 0.75
    /// The white patch is left of this, the dark patch right of it (to the middle).
    static let patchSplit = 0.25
    static let stripesPerWidth = 64.0
    private static let black = 0.03
    private static let white = 0.9

    /// Eight bars (white, yellow, cyan, green, magenta, red, blue, black) in linear RGB.
    private static let bars: [(Double, Double, Double)] = [
        (1, 1, 1), (1, 1, 0), (0, 1, 1), (0, 1, 0), (1, 0, 1), (1, 0, 0), (0, 0, 1), (0, 0, 0),
    ]

    /// The scene as auto exposure meters it: rectangles of one luminance
    /// (reflectance). The bars by their mean (they move every frame; a real AE
    /// would hunt on them, this one is steady), the stripes by theirs.
    static let regions: [(rect: NormalisedRect, luminance: Double)] = {
        let barLuma = bars.map { 0.299 * $0.0 + 0.587 * $0.1 + 0.114 * $0.2 }.reduce(0, +) / Double(bars.count)
        let patch = greyBand - lowerBand
        return [
            (NormalisedRect(x: 0, y: 0, width: 1, height: lowerBand), barLuma),
            (NormalisedRect(x: 0, y: lowerBand, width: patchSplit, height: patch), SimScene.whiteReflectance),
            (NormalisedRect(x: patchSplit, y: lowerBand, width: 0.5 - patchSplit, height: patch),
             SimScene.darkReflectance),
            (NormalisedRect(x: 0, y: greyBand, width: 0.5, height: 1 - greyBand), SimScene.greyReflectance),
            (NormalisedRect(x: 0.5, y: lowerBand, width: 0.5, height: 1 - lowerBand), (white + black) / 2),
        ]
    }()

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Draws frame `index` into `buffer` (I420, tightly packed) as `render` says.
    func draw(into buffer: UnsafeMutableRawPointer, index: UInt64, millis: Int64, render: SimRender) {
        let cw = (width + 1) / 2, ch = (height + 1) / 2
        let yPlane = buffer.assumingMemoryBound(to: UInt8.self)
        let uPlane = yPlane + width * height
        let vPlane = uPlane + cw * ch
        let shift = Double(index * 8 % UInt64(max(width, 1))) / Double(max(width, 1))
        let crop = render.crop
        var rows: [[UInt8]] = []  // per band: Y (width), U (cw), V (cw)
        for band in 0..<3 {
            rows.append(contentsOf: Self.row(band: band, width: width, shift: shift, render: render))
        }
        func band(_ row: Int, of rowsTotal: Int) -> Int {
            let sy = crop.y + (Double(row) + 0.5) / Double(max(rowsTotal, 1)) * crop.height
            return sy < Self.lowerBand ? 0 : sy < Self.greyBand ? 1 : 2
        }
        for r in 0..<height {
            rows[band(r, of: height) * 3].withUnsafeBufferPointer {
                (yPlane + r * width).update(from: $0.baseAddress!, count: width)
            }
        }
        for r in 0..<ch {
            let b = band(r, of: ch) * 3
            rows[b + 1].withUnsafeBufferPointer { (uPlane + r * cw).update(from: $0.baseAddress!, count: cw) }
            rows[b + 2].withUnsafeBufferPointer { (vPlane + r * cw).update(from: $0.baseAddress!, count: cw) }
        }
        let scaleFactor = max(1, height / 120)
        let text = "F\(index) T\(millis)"
        Digits.draw(text, into: yPlane, stride: width, width: width, height: height,
                    x: 4 * scaleFactor, y: 4 * scaleFactor, scale: scaleFactor)
    }

    /// One output row of a band (0: bars, 1: white and dark patches and stripes,
    /// 2: grey patch and stripes): Y, U, V.
    static func row(band: Int, width: Int, shift: Double, render: SimRender) -> [[UInt8]] {
        let n = max(width, 1)
        let crop = render.crop
        var red = [Double](repeating: 0, count: n)
        var green = red, blue = red
        red.withUnsafeMutableBufferPointer { r in
            green.withUnsafeMutableBufferPointer { g in
                blue.withUnsafeMutableBufferPointer { b in
                    for x in 0..<n {
                        let sx = crop.x + (Double(x) + 0.5) / Double(n) * crop.width
                        if band == 0 {
                            var f = (sx + shift).truncatingRemainder(dividingBy: 1)
                            if f < 0 { f += 1 }
                            let c = bars[min(7, Int(f * 8))]
                            (r[x], g[x], b[x]) = c
                        } else if sx < 0.5 {
                            let v = band == 2 ? SimScene.greyReflectance
                                : sx < patchSplit ? SimScene.whiteReflectance : SimScene.darkReflectance
                            (r[x], g[x], b[x]) = (v, v, v)
                        } else {
                            var f = (sx * stripesPerWidth).truncatingRemainder(dividingBy: 1)
                            if f < 0 { f += 1 }
                            let v = f < 0.5 ? white : black
                            (r[x], g[x], b[x]) = (v, v, v)
                        }
                    }
                    // Defocus, in output pixels (a zoomed crop magnifies it too).
                    let radius = Int((render.blur * Double(n) / max(crop.width, 1e-6)).rounded())
                    if radius > 0 {
                        boxBlur(r, radius)
                        boxBlur(g, radius)
                        boxBlur(b, radius)
                    }
                }
            }
        }
        var y = [UInt8](repeating: 0, count: n)
        let cw = (n + 1) / 2
        var u = [UInt8](repeating: 128, count: cw)
        var v = u
        var us = [Double](repeating: 0, count: n), vs = us
        let level = render.level
        for x in 0..<n {
            // Sensor: exposure and clipping; then white balance; then the ISP's tuning.
            let rr = min(1, min(1, red[x] * level) * render.redTint)
            let gg = min(1, green[x] * level)
            let bb = min(1, min(1, blue[x] * level) * render.blueTint)
            var luma = 0.299 * rr + 0.587 * gg + 0.114 * bb
            let cb = (bb - luma) * 0.564 * render.saturation
            let cr = (rr - luma) * 0.713 * render.saturation
            luma = (luma - 0.5) * render.contrast + 0.5 + render.brightness
            y[x] = UInt8(16 + 219 * min(1, max(0, luma)) + 0.5)
            us[x] = cb
            vs[x] = cr
        }
        for c in 0..<cw {
            let a = 2 * c, b = min(2 * c + 1, n - 1)
            u[c] = UInt8(max(16, min(240, 128 + 224 * (us[a] + us[b]) / 2)).rounded())
            v[c] = UInt8(max(16, min(240, 128 + 224 * (vs[a] + vs[b]) / 2)).rounded())
        }
        return [y, u, v]
    }

    /// A box blur of `radius` pixels in place, edges held.
    private static func boxBlur(_ p: UnsafeMutableBufferPointer<Double>, _ radius: Int) {
        let n = p.count
        guard n > 1, radius > 0 else { return }
        var prefix = [Double](repeating: 0, count: n + 1)
        for i in 0..<n { prefix[i + 1] = prefix[i] + p[i] }
        for i in 0..<n {
            let lo = max(0, i - radius), hi = min(n - 1, i + radius)
            p[i] = (prefix[hi + 1] - prefix[lo]) / Double(hi - lo + 1)
        }
    }
}

/// A 3x5 bitmap font for digits and a few letters: enough to burn frame numbers
/// and times into the picture.
enum Digits {
    static let glyphs: [Character: [UInt8]] = [
        "0": [7, 5, 5, 5, 7], "1": [2, 6, 2, 2, 7], "2": [7, 1, 7, 4, 7], "3": [7, 1, 7, 1, 7],
        "4": [5, 5, 7, 1, 1], "5": [7, 4, 7, 1, 7], "6": [7, 4, 7, 5, 7], "7": [7, 1, 1, 1, 1],
        "8": [7, 5, 7, 5, 7], "9": [7, 5, 7, 1, 7], "F": [7, 4, 6, 4, 4], "T": [7, 2, 2, 2, 2],
        " ": [0, 0, 0, 0, 0], "-": [0, 0, 7, 0, 0],
    ]

    static func draw(_ text: String, into y: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, height: Int,
                     x: Int, y top: Int, scale: Int) {
        var cx = x
        for ch in text {
            guard let g = glyphs[ch] else { continue }
            for (row, bits) in g.enumerated() {
                for col in 0..<3 {
                    let on = bits & (4 >> col) != 0
                    for dy in 0..<scale {
                        for dx in 0..<scale {
                            let px = cx + col * scale + dx, py = top + row * scale + dy
                            if px < width && py < height { y[py * stride + px] = on ? 235 : 16 }
                        }
                    }
                }
            }
            cx += 4 * scale
        }
    }
}
