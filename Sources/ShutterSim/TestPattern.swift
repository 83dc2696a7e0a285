import ShutterCore

/// Draws the simulated camera's picture into I420 planes: colour bars that move
/// one step per frame, with the frame number and the time burned in, so a clip
/// shows motion and any frame can be identified by eye or by a test.
struct TestPattern {
    let width: Int
    let height: Int
    /// One luma row twice as wide as the picture; each output row is a window into it,
    /// so a frame costs one memcpy per row instead of per-pixel work.
    private let lumaRow: [UInt8]
    private let uRow: [UInt8]
    private let vRow: [UInt8]

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        // Eight bars (white, yellow, cyan, green, magenta, red, blue, black) in BT.601 YUV.
        let bars: [(UInt8, UInt8, UInt8)] = [
            (235, 128, 128), (210, 16, 146), (170, 166, 16), (145, 54, 34),
            (106, 202, 222), (81, 90, 240), (41, 240, 110), (16, 128, 128),
        ]
        let cw = (width + 1) / 2
        var y = [UInt8](repeating: 0, count: 2 * width)
        var u = [UInt8](repeating: 0, count: 2 * cw)
        var v = [UInt8](repeating: 0, count: 2 * cw)
        for x in 0..<(2 * width) {
            let bar = bars[(x * bars.count / max(width, 1)) % bars.count]
            y[x] = bar.0
        }
        for x in 0..<(2 * cw) {
            let bar = bars[(x * 2 * bars.count / max(width, 1)) % bars.count]
            u[x] = bar.1
            v[x] = bar.2
        }
        lumaRow = y
        uRow = u
        vRow = v
    }

    /// Draws frame `index` into `buffer` (I420, tightly packed). `brightness` 0...1
    /// scales luma, so a dark scene looks dark and auto-flash can be checked.
    func draw(into buffer: UnsafeMutableRawPointer, index: UInt64, millis: Int64, brightness: Double) {
        let shift = Int(index * 8 % UInt64(max(width, 1)))
        let cw = (width + 1) / 2, ch = (height + 1) / 2
        let yPlane = buffer.assumingMemoryBound(to: UInt8.self)
        let uPlane = yPlane + width * height
        let vPlane = uPlane + cw * ch
        lumaRow.withUnsafeBufferPointer { row in
            for r in 0..<height { (yPlane + r * width).update(from: row.baseAddress! + shift, count: width) }
        }
        uRow.withUnsafeBufferPointer { u in
            vRow.withUnsafeBufferPointer { v in
                for r in 0..<ch {
                    (uPlane + r * cw).update(from: u.baseAddress! + shift / 2, count: cw)
                    (vPlane + r * cw).update(from: v.baseAddress! + shift / 2, count: cw)
                }
            }
        }
        if brightness < 0.999 {
            let scale = max(0, brightness)
            for i in 0..<(width * height) { yPlane[i] = UInt8(16 + Double(Int(yPlane[i]) - 16) * scale) }
        }
        let scaleFactor = max(1, height / 120)
        let text = "F\(index) T\(millis)"
        Digits.draw(text, into: yPlane, stride: width, width: width, height: height,
                    x: 4 * scaleFactor, y: 4 * scaleFactor, scale: scaleFactor)
    }
}

/// A 3x5 bitmap font for digits and a few letters: enough to burn frame numbers
/// and times into the picture.
enum Digits {
    private static let glyphs: [Character: [UInt8]] = [
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
