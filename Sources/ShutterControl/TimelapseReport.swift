// SPDX-License-Identifier: BSD-2-Clause
/// A time-lapse film (`shutterctl timelapse`): while it is made (`status.timelapse`, the
/// `timelapse` live events) and once it is (the command's reply).
public struct TimelapseReport: Codable, Sendable, Equatable {
    /// "making", then "done", "failed" or "cancelled" (events and replies only).
    public var state: String
    /// The film's path on the card once its photos are known ("…/DCIM/timelapse-1000120-1000480.MP4").
    public var output: String? = nil
    /// Photos handled so far, of the photos in the range.
    public var done: Int = 0
    public var of: Int = 0
    /// The range's first and last photo, by number (as `shutterctl files` lists them).
    public var first: Int? = nil
    public var last: Int? = nil
    public var fps: Int
    /// The film's size, once the first photo is read.
    public var width: Int? = nil
    public var height: Int? = nil
    /// Frames in the finished film (photos that did not decode are left out), its bytes.
    public var frames: Int? = nil
    public var bytes: Int64? = nil
    /// Photos left out, each with why.
    public var skipped: [String]? = nil
    /// Why it failed or was cancelled.
    public var error: String? = nil

    public init(state: String, fps: Int) {
        self.state = state
        self.fps = fps
    }

    private enum CodingKeys: String, CodingKey {
        case state, output, done, of, first, last, fps, width, height, frames, bytes, skipped, error
    }

    // By hand: a key an older or newer shutterd did not write is its default.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        state = try c.decodeIfPresent(String.self, forKey: .state) ?? "making"
        output = try c.decodeIfPresent(String.self, forKey: .output)
        done = try c.decodeIfPresent(Int.self, forKey: .done) ?? 0
        of = try c.decodeIfPresent(Int.self, forKey: .of) ?? 0
        first = try c.decodeIfPresent(Int.self, forKey: .first)
        last = try c.decodeIfPresent(Int.self, forKey: .last)
        fps = try c.decodeIfPresent(Int.self, forKey: .fps) ?? 0
        width = try c.decodeIfPresent(Int.self, forKey: .width)
        height = try c.decodeIfPresent(Int.self, forKey: .height)
        frames = try c.decodeIfPresent(Int.self, forKey: .frames)
        bytes = try c.decodeIfPresent(Int64.self, forKey: .bytes)
        skipped = try c.decodeIfPresent([String].self, forKey: .skipped)
        error = try c.decodeIfPresent(String.self, forKey: .error)
    }
}
