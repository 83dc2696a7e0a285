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
/// the cost was underestimated. No cost measured yet: the frame the encoder is on counts
/// (`meanCost`); the encoder idle, one frame's credit a frame, slowed by the queue. Pure (times come in as arguments): `FrameThinningTests` drives it.
struct FrameThinning: Sendable {
    /// Encoded frames the mean cost is taken over: seconds of history at a few frames a second.
    static let window = 32

    let capacity: Int
    private var costs: [Duration] = []
    private var next = 0
    private var sum: Duration = .zero
    private var credit = 1.0
    private var lastTimestamp: MonotonicTime?
    /// The first frame's timestamp and when it came.
    private var origin: (timestamp: MonotonicTime, wall: MonotonicTime)?

    init(capacity: Int) { self.capacity = max(1, capacity) }

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

    /// The mean cost of a frame, the current one counted with its time so far. Before any, a
    /// quarter of the current one's time so far: the first frame opens the encoder, which
    /// takes a few frames' time (seconds on a starved CPU), so the frames of that time are
    /// taken ever less often rather than until the pool is full (then a gap while it drains).
    func meanCost(busyFor: Duration?) -> Duration? {
        guard !costs.isEmpty else { return busyFor.map { $0 / 4 } }
        let n = costs.count + (busyFor == nil ? 0 : 1)
        return (sum + (busyFor ?? .zero)) / n
    }

    /// 1 while the queue holds at most a quarter of its frames (jitter the pool is for),
    /// falling to 0 when it is full.
    func occupancyFactor(queued: Int) -> Double {
        let low = max(1, capacity / 4)
        if queued <= low { return 1 }
        return max(0, Double(capacity - queued) / Double(capacity - low))
    }

    /// Whether to take the frame stamped `timestamp` (camera order) that came `now` (the
    /// clock `busyFor` is on), with `queued` frames waiting or being encoded and the encoder
    /// on its current frame for `busyFor` (nil: idle). Call once per frame.
    mutating func admit(timestamp: MonotonicTime, now: MonotonicTime, queued: Int, busyFor: Duration?) -> Bool {
        let f = occupancyFactor(queued: queued)
        var gain = f
        if let last = lastTimestamp, let cost = meanCost(busyFor: busyFor), cost > .zero {
            let step = max(.zero, timestamp - last)
            gain = f * Double(step.nanoseconds) / Double(cost.nanoseconds)
        }
        if lastTimestamp.map({ timestamp > $0 }) ?? true { lastTimestamp = timestamp }
        credit = min(1, credit + gain)
        if origin == nil { origin = (timestamp, now) }
        // Frames stamped faster than they come (stored or synthetic ones, a test's clock) are
        // not a camera's: the pool alone decides.
        if let o = origin, (timestamp - o.timestamp) - (now - o.wall) > .milliseconds(200) { return true }
        guard credit >= 0.999 else { return false }
        credit -= 1
        return true
    }
}
