// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import XCTest
@testable import ShutterMedia

/// An encoder that cannot keep up, under a CPU quota's bursts, on a manual clock: the
/// recording queue with its 12-frame pool, a 30 fps camera whose frames arrive only while
/// the process runs, and a virtual encoder that works only then. The CPU comes as a cgroup
/// CFS quota gives it: per 100 ms period a budget (from a fixed pseudo-random sequence, 0 to
/// 20 ms, 10 ms on average), used from the period's start; the encoder needs 3, 5 or 7
/// frame periods' worth of that budget a frame. Frames left out at the encoder's pace
/// (`FrameThinning`) are spread evenly: the largest gap between the frames encoded is at
/// most 3 times the median. Dropping only when the pool is full (the rule before) leaves
/// runs of frames and holes.
final class FrameThinningTests: XCTestCase {
    struct Run {
        var kept: [MonotonicTime] = []
        var thinned = 0
        var poolFull = 0

        var gaps: [Duration] { zip(kept, kept.dropFirst()).map { $1 - $0 }.sorted() }
        var median: Duration { gaps[gaps.count / 2] }
        var ratio: Double { Double(gaps.last!.nanoseconds) / Double(median.nanoseconds) }
        /// The largest gap between frames from `seconds` into the clip on, over the median.
        func ratio(after seconds: Int64) -> Double {
            let late = kept.filter { $0 - kept[0] >= .seconds(seconds) }
            let largest = zip(late, late.dropFirst()).map { $1 - $0 }.max()!
            return Double(largest.nanoseconds) / Double(median.nanoseconds)
        }
        var span: Duration { kept.last! - kept.first! }
    }

    /// 20 s of 30 fps (600 frames); the encoder takes `stride` frame periods of the mean CPU a
    /// frame, and its first two frames `openStride` more each (the first: its thread starting,
    /// x264 and the file opening, not measured; the second: x264 touching the rest of its
    /// memory; in shutterd some 4-5 frames' time each at 8 and 15 % of a core).
    func simulate(stride: Int, paced: Bool, seed: UInt64, openStride: Int = 0) -> Run {
        let clock = ManualClock(start: .milliseconds(0))
        let queue = RecordingQueue(frameCapacity: 12, clock: clock)
        let video = SyntheticVideo(width: 64, height: 48)
        var random = seed
        func budget() -> Int64 {  // ms of CPU in a 100 ms period: 0...20
            random = random &* 6364136223846793005 &+ 1442695040888963407
            return Int64((random >> 33) % 21)
        }
        let costMicros = Int64(stride) * 10_000 / 3  // 3 frames a period at 10 ms of CPU
        var run = Run()
        var next = 0                 // the next camera frame
        var pending: [Int] = []      // exposed while the process did not run
        var current: QueuedFrame?
        var remaining: Int64 = 0     // CPU µs the current frame still needs
        var encoded = 0
        var periodBudget: Int64 = 0
        for ms in Int64(0)..<30_000 {  // 20 s of frames, then the queue drains (the clip's finish)
            clock.advance(to: .milliseconds(ms))
            if ms % 100 == 0 { periodBudget = budget() }
            while Int64(next) * 1000 / 30 <= min(ms, 19_999) { pending.append(next); next += 1 }
            guard ms % 100 < periodBudget else { continue }  // throttled
            for i in pending {
                let t = MonotonicTime(nanoseconds: Int64(i) * 1_000_000_000 / 30)
                _ = queue.push(frame: video.frame(index: i, timestamp: t), paced: paced)
            }
            pending.removeAll()
            if current == nil, let item = queue.tryPop(), case .video(let f) = item {
                current = f
                remaining = costMicros + (encoded < 2 ? Int64(openStride) * 10_000 / 3 : 0)
            }
            guard let f = current else { continue }
            remaining -= 1000
            if remaining <= 0 {
                run.kept.append(f.timestamp)
                queue.recycle(f, measured: encoded > 0)
                encoded += 1
                current = nil
            }
        }
        run.thinned = queue.framesThinned
        run.poolFull = queue.framesDropped - queue.framesThinned
        return run
    }

    func testLeavesFramesOutEvenlyUnderQuotaBursts() {
        var oldWorst = 0.0
        for (stride, open) in [(3, 0), (5, 0), (7, 0), (3, 12), (5, 20), (7, 28)] {
            for seed: UInt64 in [1, 2, 3] {
                let new = simulate(stride: stride, paced: true, seed: seed, openStride: open)
                let old = simulate(stride: stride, paced: false, seed: seed, openStride: open)
                func line(_ r: Run) -> String {
                    String(format: "%d frames, largest gap %.3f s, median %.3f s (%.1fx), span %.2f s, %d left out, %d pool full",
                           r.kept.count, Double(r.gaps.last!.nanoseconds) / 1e9, Double(r.median.nanoseconds) / 1e9,
                           r.ratio, Double(r.span.nanoseconds) / 1e9, r.thinned, r.poolFull)
                }
                print("encoder at 1/\(stride) of 30 fps, open \(open), seed \(seed): paced: \(line(new)), from 3 s on \(String(format: "%.1fx", new.ratio(after: 3))); pool only: \(line(old))")
                XCTAssertLessThanOrEqual(new.ratio(after: 3), 3, "1/\(stride), seed \(seed): from 3 s on, largest gap <= 3x the median")
                XCTAssertLessThanOrEqual(new.ratio, 3, "1/\(stride), open \(open), seed \(seed): largest gap")
                // What the encoder can do (600 / stride) is nearly all taken: the pace is not too shy.
                XCTAssertGreaterThanOrEqual(new.kept.count, 600 / stride * 8 / 10, "1/\(stride), seed \(seed)")
                XCTAssertGreaterThanOrEqual(new.span, .seconds(19), "the clip spans the 20 s")
                oldWorst = max(oldWorst, old.ratio)
            }
        }
        XCTAssertGreaterThan(oldWorst, 3, "dropping only when the pool is full leaves holes (the rule before)")
    }

    /// An encoder that keeps up loses nothing to the pace, bursts or not.
    func testAnEncoderThatKeepsUpKeepsEveryFrame() {
        var t = FrameThinning(capacity: 12)
        var kept = 0
        for i in 0..<300 {
            t.encoded(cost: .milliseconds(20))
            let queued = i % 3  // a little jitter in the queue
            if t.admit(timestamp: .milliseconds(Int64(i) * 33), now: .milliseconds(Int64(i) * 33), queued: queued, busyFor: .milliseconds(10)) { kept += 1 }
        }
        XCTAssertEqual(kept, 300)
    }

    /// An encoder at 1/4 of the frame rate and a queue that stays short: every 4th frame.
    func testASteadyEncoderKeepsEveryKthFrame() {
        var t = FrameThinning(capacity: 12)
        var kept: [Int] = []
        for _ in 0..<8 { t.encoded(cost: .nanoseconds(4 * 33_333_333)) }
        for i in 0..<40 where t.admit(timestamp: MonotonicTime(nanoseconds: Int64(i) * 33_333_333),
                                          now: MonotonicTime(nanoseconds: Int64(i) * 33_333_333), queued: 1, busyFor: nil) {
            kept.append(i)
        }
        XCTAssertEqual(Set(zip(kept, kept.dropFirst()).map { $1 - $0 }), [4], "kept \(kept)")
    }

    /// The encoder opening (two seconds on its first frame, no cost known yet): the frames of
    /// those seconds are not taken one after the other until the pool is full.
    func testTheFirstFrameCountsWhileTheEncoderOpens() {
        var t = FrameThinning(capacity: 12)
        var kept: [Int] = []
        var queued = 1  // the first frame, being encoded
        for i in 1...60 {
            let ts = MonotonicTime(nanoseconds: Int64(i) * 33_333_333)
            if t.admit(timestamp: ts, now: ts, queued: queued, busyFor: ts - MonotonicTime(nanoseconds: 0)) { kept.append(i); queued += 1 }
        }
        XCTAssertLessThan(kept.count, 12, "not until the pool is full: kept \(kept)")
        let late = kept.filter { $0 > 4 }
        XCTAssertFalse(late.isEmpty, "the encoder's second second still gets a frame: \(kept)")
        XCTAssertTrue(zip(late, late.dropFirst()).allSatisfy { $1 - $0 >= 2 }, "no run once it is slow: \(kept)")
    }

    /// Frames stamped faster than they come (stored frames fed as fast as they go, a test's
    /// clock) are not thinned: the pool alone decides, as before.
    func testFramesFasterThanTheirStampsAreNotPaced() {
        var t = FrameThinning(capacity: 400)
        for _ in 0..<8 { t.encoded(cost: .milliseconds(100)) }  // a slow encoder
        var kept = 0
        for i in 0..<90 where t.admit(timestamp: .milliseconds(Int64(i) * 33), now: .milliseconds(Int64(i)),
                                      queued: i, busyFor: .milliseconds(1)) {
            kept += 1
        }
        XCTAssertGreaterThanOrEqual(kept, 84, "only the first frames are paced")
    }

    /// A queue filling up slows the pace even before any cost is known (past half the pool), and
    /// from a backlog of one frame once the start is past; a full one takes nothing.
    func testAFillingQueueSlowsThePace() {
        let t = FrameThinning(capacity: 12)
        XCTAssertEqual(t.occupancyFactor(queued: 3), 1)
        XCTAssertEqual(t.occupancyFactor(queued: 12), 0)
        XCTAssertLessThan(t.occupancyFactor(queued: 8), t.occupancyFactor(queued: 5))
        // Once the start is past (costs measured), a backlog beyond the frame encoded and the
        // next slows the pace, so it drains instead of keeping the encoder behind.
        var settled = FrameThinning(capacity: 12)
        for _ in 0..<FrameThinning.settled + 1 { settled.encoded(cost: .milliseconds(300)) }
        XCTAssertEqual(settled.occupancyFactor(queued: 2), 1)
        XCTAssertLessThan(settled.occupancyFactor(queued: 3), 1)
        XCTAssertEqual(settled.occupancyFactor(queued: 12), 0)
        var full = FrameThinning(capacity: 12)
        XCTAssertTrue(full.admit(timestamp: .milliseconds(0), now: .milliseconds(0), queued: 0, busyFor: nil))
        for i in 1...10 { XCTAssertFalse(full.admit(timestamp: .milliseconds(Int64(i) * 33), now: .milliseconds(Int64(i) * 33),
                                                    queued: 12, busyFor: nil)) }
    }

    /// A 12-frame queue on a manual clock at 0 with ten frames `apart` ms apart, queued unpaced
    /// (`wait`: by a producer that waits for room, as `appendWaiting`).
    private func queueOfTenFrames(apart: Int64, wait: Bool) -> (RecordingQueue, ManualClock) {
        let clock = ManualClock(start: .milliseconds(0))
        let queue = RecordingQueue(frameCapacity: 12, clock: clock)
        let video = SyntheticVideo(width: 64, height: 48)
        for i in 0..<10 {
            _ = queue.push(frame: video.frame(index: i, timestamp: .milliseconds(Int64(i) * apart)), paced: false, wait: wait)
        }
        return (queue, clock)
    }

    /// Frames copied close together while the encoder opened (no cost known: the pace took
    /// them) are passed over once a cost is known, more of them the longer they waited: the
    /// backlog drains at once instead of being encoded at the slow pace, 100 ms apart.
    func testFramesQueuedWhileTheEncoderOpenedArePassedOver() {
        let (queue, clock) = queueOfTenFrames(apart: 100, wait: false)
        func take() -> QueuedFrame? {
            guard let item = queue.tryPop(), case .video(let f) = item else { return nil }
            return f
        }
        let opening = take()!
        clock.advance(to: .milliseconds(1500))
        queue.recycle(opening, measured: false)      // the opening: no cost
        let warmUp = take()!
        XCTAssertEqual(warmUp.timestamp, .milliseconds(100), "no cost known yet: the next frame, whatever its distance")
        clock.advance(to: .milliseconds(2400))
        queue.recycle(warmUp)                        // x264's warm-up: not a cost
        let third = take()!
        XCTAssertEqual(third.timestamp, .milliseconds(200), "the warm-up frame's 900 ms are not taken as the cost")
        clock.advance(to: .milliseconds(2700))
        queue.recycle(third)                         // a cost: 300 ms
        var taken: [Int64] = [third.timestamp.nanoseconds / 1_000_000]
        var now: Int64 = 2700
        while let f = take() {
            taken.append(f.timestamp.nanoseconds / 1_000_000)
            now += 300
            clock.advance(to: .milliseconds(now))
            queue.recycle(f)                         // 300 ms each
        }
        // Queued at 0, they waited 2.7 s, far more than a cost: the window is 1.5 costs (450 ms).
        XCTAssertEqual(taken, [200, 600, 900], "the last frame within 450 ms, then the newest: \(taken)")
        XCTAssertEqual(queue.framesThinned, 10 - 2 - (taken.count), "the passed-over frames are counted as left out")
    }

    /// The window a queued frame is passed over in: half a cost while frames wait about one,
    /// growing with the wait to one and a half (the backlog thinned, gaps of at most that).
    func testThePassOverWindowGrowsWithTheWait() {
        var t = FrameThinning(capacity: 12)
        XCTAssertNil(t.passOverWindow(waited: .seconds(5)), "no cost measured: nothing is passed over")
        t.encoderOpened(now: .milliseconds(1000))
        t.encoded(cost: .milliseconds(900))          // the warm-up frame
        XCTAssertNil(t.passOverWindow(waited: .seconds(5)), "the warm-up frame is not a cost")
        t.encoded(cost: .milliseconds(200))
        XCTAssertEqual(t.meanCost(busyFor: nil, sinceFirst: .zero), .milliseconds(200))
        XCTAssertEqual(t.passOverWindow(waited: .milliseconds(150)), .milliseconds(100))
        XCTAssertEqual(t.passOverWindow(waited: .milliseconds(200)), .milliseconds(100))
        XCTAssertEqual(t.passOverWindow(waited: .milliseconds(300)), .milliseconds(200))
        XCTAssertEqual(t.passOverWindow(waited: .seconds(3)), .milliseconds(300), "at most one and a half costs")
    }

    /// Between the opening and the first cost (the warm-up frame) the stand-in is a quarter of
    /// the opening, or of the warm-up frame's time so far once that is longer: not near zero
    /// just after the encoder took the frame, which took the camera's held-back frames in a run.
    func testTheWarmUpFrameIsPacedFromTheOpening() {
        var t = FrameThinning(capacity: 12)
        XCTAssertTrue(t.admit(timestamp: .milliseconds(0), now: .milliseconds(0), queued: 0, busyFor: nil))
        XCTAssertEqual(t.meanCost(busyFor: .milliseconds(600), sinceFirst: .milliseconds(600)), .milliseconds(300),
                       "during the opening: half the time since the first frame")
        t.encoderOpened(now: .milliseconds(800))
        XCTAssertEqual(t.meanCost(busyFor: .milliseconds(1), sinceFirst: .milliseconds(801)), .milliseconds(200))
        XCTAssertEqual(t.meanCost(busyFor: .milliseconds(1200), sinceFirst: .seconds(2)), .milliseconds(300))
        // Six frames the camera held back arrive together just after the encoder took its next
        // frame, while 3 are queued: one is taken, not six.
        var taken = 0
        for i in 0..<6 {
            let ts = MonotonicTime(nanoseconds: (700 + Int64(i) * 33) * 1_000_000)
            if t.admit(timestamp: ts, now: .milliseconds(801), queued: 3 + taken, busyFor: .milliseconds(1)) { taken += 1 }
        }
        XCTAssertEqual(taken, 1)
    }

    /// Stored frames fed as fast as the encoder goes (`appendWaiting`: benchmarks, tools) are
    /// never passed over, however slow the encoder and long their wait.
    func testFramesOfAWaitingProducerAreNeverPassedOver() {
        let (queue, clock) = queueOfTenFrames(apart: 33, wait: true)
        var now: Int64 = 0
        var taken = 0
        while let item = queue.tryPop(), case .video(let f) = item {
            taken += 1
            now += 500
            clock.advance(to: .milliseconds(now))
            queue.recycle(f, measured: taken > 1)
        }
        XCTAssertEqual(taken, 10)
        XCTAssertEqual(queue.framesDropped, 0)
    }

    /// The pool is not filled when the encoder opens (an encoder starved of CPU would spend
    /// its opening on it) but while the encoder waits for work, up to its capacity.
    func testThePoolFillsWhileTheEncoderWaits() {
        let queue = RecordingQueue(frameCapacity: 12)
        queue.fillPoolWhileIdle(byteCount: 4096)
        XCTAssertEqual(queue.pooledBuffers, 0, "nothing allocated at the opening")
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = queue.pop()  // waits: fills the pool, then nil once finished
            done.signal()
        }
        let deadline = Date().addingTimeInterval(30)
        while queue.pooledBuffers < 12 && Date() < deadline { usleep(1000) }
        XCTAssertEqual(queue.pooledBuffers, 12)
        queue.finish()
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(queue.pooledBuffers, 12, "not past its capacity")
    }
}
