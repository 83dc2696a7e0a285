// SPDX-License-Identifier: BSD-2-Clause
/// Which frame is the press's photo: the one whose exposure started closest to
/// the press edge, never one that started more than one frame period after it.
///
/// The press is known only once the stability filter settles, and a frame is
/// delivered after its exposure, so the choice is made over a few retained
/// frames and may have to wait for the next one: a frame starting after the
/// press may be closer than the last one before it.
public enum PressFrameChoice: Equatable, Sendable {
    /// This candidate (an index into the candidates given).
    case frame(Int)
    /// The next frame may be closer: ask again when it arrives.
    case waitForNext
    /// No candidate at all.
    case none

    /// `exposureStarts`: the retained frames' exposure starts, oldest first.
    /// `period`: the frame period (the longest a frame after the press may start after it).
    /// `waitedLong`: a later frame was waited for long enough (frames keep coming, but
    /// all exposed before the press: a camera whose timestamps run a few frames behind
    /// its delivery, on a loaded machine): the last frame exposed at or before the
    /// press is the photo rather than none at all.
    public static func choose(press: MonotonicTime, exposureStarts: [MonotonicTime], period: Duration,
                              waitedLong: Bool) -> PressFrameChoice {
        let choice = choose(press: press, exposureStarts: exposureStarts, period: period)
        guard waitedLong, choice == .waitForNext, let before = exposureStarts.lastIndex(where: { $0 <= press }) else {
            return choice
        }
        return .frame(before)
    }

    public static func choose(press: MonotonicTime, exposureStarts: [MonotonicTime], period: Duration) -> PressFrameChoice {
        guard !exposureStarts.isEmpty else { return .waitForNext }
        let limit = press + period
        // The last frame that started at or before the press, and the first after it.
        let before = exposureStarts.lastIndex { $0 <= press }
        let after = exposureStarts.firstIndex { $0 > press && $0 <= limit }
        switch (before, after) {
        case let (b?, a?):
            // Closest; a tie goes to the earlier frame (already exposing at the press).
            return (exposureStarts[a] - press) < (press - exposureStarts[b]) ? .frame(a) : .frame(b)
        case let (b?, nil):
            // Nothing after the press yet: the next frame starts about one period
            // after this one; it may be closer, unless a later one was already seen.
            if exposureStarts.last! > limit { return .frame(b) }
            let next = exposureStarts[b] + period
            return next - press < press - exposureStarts[b] ? .waitForNext : .frame(b)
        case let (nil, a?):
            // Every retained frame started after the press (it predates them).
            return .frame(a)
        case (nil, nil):
            // Only frames more than a period after the press: the closest of those
            // is still later than allowed, so none qualifies.
            return .none
        }
    }
}
