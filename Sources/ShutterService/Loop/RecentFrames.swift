// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// The last few video frames, by reference: a press is only known once the
/// stability filter settles (stabilityMs later), so the frame exposed at the
/// press has already passed by then. A clip starts from here, at or before the
/// press, and the press photo is chosen from here. Small on purpose: each held
/// frame is a camera buffer.
struct RecentFrames {
    private var frames: [Frame] = []
    let capacity: Int
    /// Frames pushed since the start (the scene is metered every tenth).
    private(set) var pushed = 0

    init(capacity: Int) { self.capacity = max(1, capacity) }

    mutating func push(_ frame: Frame) {
        if frames.count == capacity { frames.removeFirst() }
        frames.append(frame)
        pushed += 1
    }

    mutating func removeAll() { frames.removeAll() }

    /// Frames from the last one whose exposure began at or before `time` onwards.
    func frames(from time: MonotonicTime) -> [Frame] {
        guard let i = frames.lastIndex(where: { $0.exposureStart <= time }) else { return frames }
        return Array(frames[i...])
    }

    /// The retained frames, oldest first.
    var all: [Frame] { frames }
}
