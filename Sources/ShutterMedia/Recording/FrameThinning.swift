// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// Which camera frames an encoder that cannot keep up takes: decided before a frame is
/// copied, so the ones left out are spread evenly over the clip instead of lost in runs.
///
/// Under a CPU quota (cgroup CFS) the encoder gets the CPU in bursts: a pool that drops
/// only when full takes the frames that arrive just after a burst freed slots, one after
/// the other, then none for a long while (at 8 % of a core the largest gap was 4.6 times the
/// median). Here a frame is taken at the pace the encoder has shown: a credit grows with
/// the frame's timestamp step over the encoder's mean cost (the wall time it took for each
/// of its last `window` frames, and the frame it is on so far), and a frame is taken when
/// one frame's worth is there. The credit never exceeds one frame, so a burst of frames
/// after a stall is not a run. A queue filling up slows the pace (`occupancyFactor`):
/// the cost was underestimated; only past half full, so the jitter the pool is for does not.
/// No cost measured yet (the encoder opening: its length is not known until it ends): half
/// the time it has been at it stands in (`meanCost`), and the frames taken too close
/// together meanwhile are passed over once a cost is known (`passesOver`), so that backlog
/// is not encoded at the slow pace while no new frame finds room (a gap). Pure (times come
/// in as arguments): `FrameThinningTests` drives it.
struct FrameThinning: Sendable {
    /// Encoded frames the mean cost is taken over: seconds of history at a few frames a second.
    static let window = 32

    let capacity: Int
    private var costs: [Duration] = []
    private var next = 0
    private var sum: Duration = .zero
    private var opened = false
    private var credit = 1.0
    private var lastTimestamp: MonotonicTime?
    /// The first frame's timestamp and when it came.
    private var origin: (timestamp: MonotonicTime, wall: MonotonicTime)?

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// The encoder finished the frame that opened it (its time is a one-off, not a cost).
    mutating func encoderOpened() { opened = true }

    /// The encoder finished a frame that took `cost` of wall time, from taking it to being done
    /// (not the frame that opened the encoder: a one-off).
    mutating func encoded(cost: Duration) {
        if costs.count < Self.window {
            costs.append(cost)
        } else {
            sum -= costs[next]
            costs[next] = cost
            next = (next + 1) % Self.window
        }
        sum += cost
    }

    /// The mean cost of a frame, the current one counted with its time so far. Before any is
    /// measured, half the time the encoder has been at it: since the first frame came
    /// while its thread starts and the clip opens (at 8 % of a core, measured: the thread
    /// 0.1-0.3 s, x264 and the file 0.4-0.5 s, the pool 0.3-0.9 s, the first frame 0.9 s:
    /// some seven frames' time), then the current frame's. So the frames of the opening are
    /// taken ever less often (its length is not known until it ends) rather than one after
    /// the other until the pool is full: a full pool drains with nothing taken, a gap.
    func meanCost(busyFor: Duration?, sinceFirst: Duration) -> Duration? {
        guard !costs.isEmpty else {
            guard let waited = opened ? busyFor : sinceFirst, waited > .zero else { return nil }
            return waited / 2
        }
        let n = costs.count + (busyFor == nil ? 0 : 1)
        return (sum + (busyFor ?? .zero)) / n
    }

    /// Whether the encoder passes over a queued frame because the one queued after it
    /// (`next`) is still within half a mean cost of the last frame it took: frames copied
    /// close together while no cost was known (the encoder opening) would otherwise be
    /// encoded at its slow pace, one after the other, while new frames wait for room — a gap.
    /// Never before a cost is measured.
    func passesOver(last: MonotonicTime, next: MonotonicTime) -> Bool {
        guard let window = passOverWindow else { return false }
        return next - last <= window
    }

    /// Half the mean cost once one is measured (nil before: nothing is passed over).
    var passOverWindow: Duration? {
        guard !costs.isEmpty, let cost = meanCost(busyFor: nil, sinceFirst: .zero) else { return nil }
        return cost / 2
    }

    /// 1 while the queue holds at most half its frames (jitter, and the backlog of the
    /// encoder's start), falling to 0 when it is full.
    func occupancyFactor(queued: Int) -> Double {
        let low = max(1, capacity / 2)
        if queued <= low { return 1 }
        return max(0, Double(capacity - queued) / Double(capacity - low))
    }

    /// Whether to take the frame stamped `timestamp` (camera order) that came `now` (the
    /// clock `busyFor` is on), with `queued` frames waiting or being encoded and the encoder
    /// on its current frame for `busyFor` (nil: idle). Call once per frame.
    mutating func admit(timestamp: MonotonicTime, now: MonotonicTime, queued: Int, busyFor: Duration?) -> Bool {
        let o = origin ?? (timestamp, now)
        origin = o
        let f = occupancyFactor(queued: queued)
        var gain = f
        if let last = lastTimestamp, let cost = meanCost(busyFor: busyFor, sinceFirst: now - o.wall), cost > .zero {
            let step = max(.zero, timestamp - last)
            gain = f * Double(step.nanoseconds) / Double(cost.nanoseconds)
        }
        if lastTimestamp.map({ timestamp > $0 }) ?? true { lastTimestamp = timestamp }
        credit = min(1, credit + gain)
        // Frames stamped faster than they come (stored or synthetic ones, a test's clock) are
        // not a camera's: the pool alone decides.
        if (timestamp - o.timestamp) - (now - o.wall) > .milliseconds(200) { return true }
        guard credit >= 0.999 else { return false }
        credit -= 1
        return true
    }
}
