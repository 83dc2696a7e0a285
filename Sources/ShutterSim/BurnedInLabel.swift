// SPDX-License-Identifier: BSD-2-Clause
/// Reads back the label the test pattern burns into every simulated frame
/// ("F<frame number> T<exposure start, ms>", top left): a test identifies a
/// saved photo's or a clip frame's sensor frame from its pixels alone.
public enum BurnedInLabel {
    /// The frame number and exposure-start time (milliseconds on the camera's
    /// clock) burned into a picture of `height` rows, from its luma (8-bit,
    /// `stride` bytes a row); nil when no label reads back.
    public static func read(luma: [UInt8], width: Int, height: Int, stride: Int? = nil) -> (frame: UInt64, millis: Int64)? {
        let stride = stride ?? width
        let scale = max(1, height / 120)  // as TestPattern draws it
        let x0 = 4 * scale, y0 = 4 * scale
        var text = ""
        for i in 0..<40 {
            let cx = x0 + i * 4 * scale
            var rows: [UInt8] = []
            for row in 0..<5 {
                var bits: UInt8 = 0
                for col in 0..<3 {
                    let px = cx + col * scale + scale / 2, py = y0 + row * scale + scale / 2
                    guard px < width, py < height, py * stride + px < luma.count else { return parse(text) }
                    if luma[py * stride + px] > 128 { bits |= 4 >> col }
                }
                rows.append(bits)
            }
            guard let ch = Digits.glyphs.first(where: { $0.value == rows })?.key else { break }
            text.append(ch)
        }
        return parse(text)
    }

    private static func parse(_ text: String) -> (frame: UInt64, millis: Int64)? {
        let parts = text.split(separator: " ")
        guard parts.count >= 2, parts[0].first == "F", parts[1].first == "T",
              let f = UInt64(parts[0].dropFirst()), let t = Int64(parts[1].dropFirst()) else { return nil }
        return (f, t)
    }
}
