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
/// after a stall is not a run. A queue filling up slows the pace (`occupancyFactor`): the
/// cost was underestimated, or a backlog is left from the start.
/// No cost measured yet (the encoder's opening and the frame after it): a stand-in from the
/// time it has been at it (`meanCost`). Once a cost is known the encoder passes over queued
/// frames too close to the last it took, more of them the longer they waited
/// (`passOverWindow`): the backlog of those seconds is thinned as it drains instead of
/// encoded at the slow pace while no new frame finds room (a gap). Pure (times come in as
/// arguments): `FrameThinningTests` drives it.
struct FrameThinning: Sendable {
    /// Encoded frames the mean cost is taken over: seconds of history at a few frames a second.
    static let window = 32

    let capacity: Int
    private var costs: [Duration] = []
    private var next = 0
    private var sum: Duration = .zero
    /// How long the encoder's opening took (its first frame: the thread, x264, the file), once done.
    private var opening: Duration?
    private var credit = 1.0
    private var lastTimestamp: MonotonicTime?
    /// The first frame after the opening was done: its cost is a warm-up, not counted.
    private var warmedUp = false
    /// The first frame's timestamp and when it came.
    private var origin: (timestamp: MonotonicTime, wall: MonotonicTime)?

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// The encoder finished the frame that opened it, `now` (its time is a one-off, not a cost).
    mutating func encoderOpened(now: MonotonicTime) {
        if opening == nil { opening = origin.map { now - $0.wall } ?? .zero }
    }

    /// The encoder finished a frame that took `cost` of wall time, from taking it to being done
    /// (not the frame that opened the encoder: a one-off). The first one is not counted either:
    /// x264 touches most of its memory on its first two frames (ffmpeg's -benchmark_all at
    /// 1080p veryfast: 78 and 44 ms of CPU, most of it the kernel's page faults, then 17-21;
    /// in shutterd at 15 % of a core the second took 0.6 s against 0.1 s after it), and that
    /// one cost slowed the pace for seconds.
    mutating func encoded(cost: Duration) {
        guard warmedUp else { warmedUp = true; return }
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
    /// measured: during the opening (the thread, x264, the file and the keyframe: 1.1 s at 8 %
    /// of a core, 0.4 s at 15 %, measured) half the time since the first frame came, so its
    /// frames are taken ever less often (its length is not known until it ends) rather than
    /// one after the other until the pool is full; then, on the warm-up frame (about as long
    /// as the opening), a quarter of the opening or of that frame's time so far, whichever is
    /// longer: some four frames spread over it, where a stand-in from its own time alone starts
    /// near zero and takes every frame the camera held back in one run.
    func meanCost(busyFor: Duration?, sinceFirst: Duration) -> Duration? {
        guard !costs.isEmpty else {
            guard let opening else { return sinceFirst > .zero ? sinceFirst / 2 : nil }
            return max(opening, busyFor ?? .zero) / 4
        }
        let n = costs.count + (busyFor == nil ? 0 : 1)
        return (sum + (busyFor ?? .zero)) / n
    }

    /// How close to the last frame it took the one queued after a frame may be for the
    /// encoder to pass over that frame (nil before a cost is measured: none is), given how long
    /// the frame `waited` in the queue. Half a mean cost while frames wait about one (frames
    /// copied close together: encoded at the slow pace one after the other they would keep new
    /// ones waiting for room, a gap); growing with the wait to one and a half (the backlog of
    /// the opening, when no cost was known): the encoder catches up by up to half a cost a
    /// frame, with gaps of at most one and a half costs, where a backlog encoded in full would
    /// stay seconds behind and slow the pace through a full queue. (Two costs: one early cost
    /// twice the true one thinned the start to 3.8x the median in `FrameThinningTests`.)
    func passOverWindow(waited: Duration) -> Duration? {
        guard !costs.isEmpty, let cost = meanCost(busyFor: nil, sinceFirst: .zero) else { return nil }
        let behind = min(max(.zero, waited - cost), cost)
        return cost / 2 + behind
    }

    /// Costs measured before the queue's low water drops to `steadyLow`: the start is past.
    static let settled = 8
    /// Frames in flight at the encoder's pace: the one encoded and the next, waiting.
    static let steadyLow = 2

    /// 1 while the queue holds at most its low water, falling to 0 when it is full. The low
    /// water is half the pool until `settled` costs are in (the backlog of the encoder's
    /// start, jitter), then `steadyLow`: frames the pace took a cost apart are never passed
    /// over, so a backlog left from the start would keep the encoder seconds behind for the
    /// whole clip (measured at 8 % of a core: the durable point 2.3 s behind the clock; with
    /// this, 1.1-1.5 s), and what a power cut loses with it.
    func occupancyFactor(queued: Int) -> Double {
        let low = costs.count >= Self.settled ? min(Self.steadyLow, capacity) : max(1, capacity / 2)
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
