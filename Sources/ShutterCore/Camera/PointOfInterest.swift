// SPDX-License-Identifier: BSD-2-Clause
/// The camera demos' tap-to-focus (`shutterctl focus X Y`): a point of the
/// picture where focus and exposure metering look. It becomes a small window
/// around the point, in the frame's coordinates as `camera.focus.window` and
/// `camera.exposure.window` have them, so it is an ordinary runtime setting
/// of those two keys (kept, reset and shown like any other).
public struct PointOfInterest: Sendable, Equatable {
    /// 0...1 across the picture, 0 at its left.
    public var x: Double
    /// 0...1 down the picture, 0 at its top.
    public var y: Double

    /// The window's width and height as a fraction of the picture's: an eighth,
    /// small enough to pick one thing out, large enough for AF to find contrast.
    public static let windowSize = 0.125

    /// What is allowed, for every refusal.
    public static let usage = "focus needs X and Y, each a number from 0 to 1 across and down the picture "
        + "(0 0 its top left, 0.5 0.5 its centre), e.g. `shutterctl focus 0.3 0.8`; or `shutterctl focus reset`"

    /// Checks the point; the error names what is allowed.
    public init(x: Double?, y: Double?) throws(PointOfInterest.Refusal) {
        guard let x, let y else { throw Refusal(message: Self.usage) }
        for (name, v) in [("X", x), ("Y", y)] where !(v.isFinite && (0...1).contains(v)) {
            throw Refusal(message: "\(name) is \(v): " + Self.usage)
        }
        self.x = x
        self.y = y
    }

    /// From the command line's words: two numbers.
    public init(_ words: [String]) throws(PointOfInterest.Refusal) {
        guard words.count == 2 else { throw Refusal(message: Self.usage) }
        guard let x = Double(words[0]) else { throw Refusal(message: "X is \"\(words[0])\", not a number: " + Self.usage) }
        guard let y = Double(words[1]) else { throw Refusal(message: "Y is \"\(words[1])\", not a number: " + Self.usage) }
        try self.init(x: x, y: y)
    }

    public struct Refusal: Error, Sendable, Equatable {
        public var message: String
    }

    /// The window around the point, [x, y, width, height] of the full frame.
    ///
    /// The point is on the picture as the photos show it: the picture is the
    /// crop of the frame (`roi`, then `zoom`), turned by the mounting rotation
    /// and mirrors. So the point is turned back first, then placed in the crop;
    /// the window is `windowSize` of the crop, moved (not shrunk) to lie inside
    /// the crop, so it stays on what the picture shows.
    public func window(controls: CameraControls, rotation: Int = 0, hflip: Bool = false, vflip: Bool = false)
        -> [Double]
    {
        let turned = rotation == 180
        let px = turned != hflip ? 1 - x : x
        let py = turned != vflip ? 1 - y : y
        let crop = (NormalisedRect(controls.roi) ?? .full).zoomed(controls.zoom)
        // Rounded to 1e-6 so the setting reads cleanly (0.2375, not 0.23750000000000002);
        // the size down and the far edge clamped after, so it never pokes out of the crop.
        let w = (Self.windowSize * crop.width * 1e6).rounded(.down) / 1e6
        let h = (Self.windowSize * crop.height * 1e6).rounded(.down) / 1e6
        let cx = crop.x + px * crop.width, cy = crop.y + py * crop.height
        let left = min(crop.x + crop.width - w, max(crop.x, ((cx - w / 2) * 1e6).rounded() / 1e6))
        let top = min(crop.y + crop.height - h, max(crop.y, ((cy - h / 2) * 1e6).rounded() / 1e6))
        return [left, top, w, h]
    }
}
