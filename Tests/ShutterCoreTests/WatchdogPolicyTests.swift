// SPDX-License-Identifier: BSD-2-Clause
import XCTest
@testable import ShutterCore

final class WatchdogPolicyTests: XCTestCase {
    private func t(_ ms: Int64) -> MonotonicTime { .milliseconds(ms) }

    /// Defaults, with storage reports every second so storage stays fresh.
    private struct Rig {
        let clock = ManualClock()
        var policy: WatchdogPolicy

        init(_ config: WatchdogConfiguration = WatchdogConfiguration()) {
            policy = WatchdogPolicy(configuration: config, startedAt: clock.now())
        }

        /// Frames every 33 ms and a storage report every second, up to `ms`.
        mutating func run(until ms: Int64, frames: Bool = true, storage: Bool = true) {
            var now = clock.now().milliseconds
            while now < ms {
                now = min(ms, now + 33)
                clock.advance(to: .milliseconds(now))
                if frames { policy.frameArrived(at: clock.now()) }
                if storage && now % 1000 < 33 { policy.storageOK(at: clock.now()) }
            }
        }

        mutating func evaluate(at ms: Int64) -> WatchdogDecision {
            clock.advance(to: .milliseconds(ms))
            return policy.evaluate(now: clock.now())
        }
    }

    func testHealthyWhileFramesArriveAndStorageAnswers() {
        var r = Rig()
        r.run(until: 5000)
        let d = r.evaluate(at: 5000)
        XCTAssertEqual(d, .healthy)
        XCTAssertTrue(d.sendsKeepAlive)
    }

    /// A camera switch or a restart for a setting stops the frames on purpose:
    /// longer than the frame timeout is no stall; past the restart timeout it is.
    func testADeliberateReopenIsNotAStall() {
        var r = Rig()
        r.run(until: 1000)
        r.policy.cameraReopenBegan(at: r.clock.now())
        r.run(until: 6000, frames: false)  // frame timeout 2 s
        XCTAssertEqual(r.evaluate(at: 6000), .healthy)
        r.policy.cameraReopenEnded(at: r.clock.now())
        // The first frame after it has the start's grace (10 s), then frames as usual.
        r.run(until: 15000, frames: false)
        XCTAssertEqual(r.evaluate(at: 15000), .healthy)
        r.run(until: 16000)
        XCTAssertEqual(r.evaluate(at: 16000), .healthy)
        XCTAssertEqual(r.policy.consecutiveFailures, 0)

        // A reopen that hangs past the restart timeout (15 s) fails like a restart.
        r.policy.cameraReopenBegan(at: r.clock.now())
        r.run(until: 31500, frames: false)
        guard case .waiting(.framesStalled, _) = r.evaluate(at: 31500) else { return XCTFail("a hung reopen is a failure") }
        XCTAssertEqual(r.policy.consecutiveFailures, 1)
    }

    func testTheFirstFrameHasAStartupGrace() {
        var r = Rig()
        XCTAssertEqual(r.evaluate(at: 10_000), .healthy, "exactly at the first-frame deadline: still healthy")
        let d = r.evaluate(at: 10_001)
        XCTAssertEqual(d, .waiting(.framesStalled, until: t(11_001)))
        XCTAssertFalse(d.sendsKeepAlive, "no WATCHDOG=1 while the camera is stalled")
    }

    func testStalledCameraEscalatesWithExponentialBackoffThenGivesUp() {
        var r = Rig()
        r.run(until: 1000)
        XCTAssertEqual(r.evaluate(at: 3000), .healthy, "frame timeout 2 s: not yet")
        XCTAssertEqual(r.evaluate(at: 3001), .waiting(.framesStalled, until: t(4001)))
        XCTAssertEqual(r.evaluate(at: 4000), .waiting(.framesStalled, until: t(4001)))
        XCTAssertEqual(r.evaluate(at: 4001), .restartCamera(attempt: 1, backoff: .seconds(1)))
        XCTAssertEqual(r.evaluate(at: 4002), .waiting(.framesStalled, until: t(19_001)), "restart in progress")
        // Attempts 2..5 after 2, 4, 8, 16 s; each reported failed at once.
        var now: Int64 = 4001
        for (attempt, wait) in [(2, 2000), (3, 4000), (4, 8000), (5, 16_000)] as [(Int, Int64)] {
            r.policy.cameraRestartFailed(at: t(now))
            XCTAssertEqual(r.policy.consecutiveFailures, attempt - 1)
            XCTAssertEqual(r.evaluate(at: now + wait - 1), .waiting(.framesStalled, until: t(now + wait)))
            XCTAssertEqual(r.evaluate(at: now + wait), .restartCamera(attempt: attempt, backoff: .milliseconds(wait)))
            now += wait
        }
        r.policy.cameraRestartFailed(at: t(now))
        let d = r.evaluate(at: now)
        XCTAssertEqual(d, .giveUp(.framesStalled))
        XCTAssertFalse(d.sendsKeepAlive)
        XCTAssertEqual(WatchdogReason.framesStalled.exitCode, 69)
        // Giving up is final: a late frame does not revive it.
        r.policy.frameArrived(at: t(now + 1))
        XCTAssertEqual(r.evaluate(at: now + 2), .giveUp(.framesStalled))
        XCTAssertNil(r.policy.nextDeadline)
    }

    func testBackoffIsCapped() {
        let c = WatchdogConfiguration(initialBackoff: .milliseconds(500), maxBackoff: .seconds(3))
        XCTAssertEqual((1...7).map { c.backoff(attempt: $0) },
                       [.milliseconds(500), .seconds(1), .seconds(2), .seconds(3), .seconds(3), .seconds(3), .seconds(3)])
        XCTAssertEqual(WatchdogConfiguration().backoff(attempt: 1000), .seconds(30))
    }

    func testARecoveryResetsTheFailureCount() {
        var r = Rig()
        r.run(until: 1000)
        _ = r.evaluate(at: 3001)
        XCTAssertEqual(r.evaluate(at: 4001), .restartCamera(attempt: 1, backoff: .seconds(1)))
        r.policy.cameraRestartFailed(at: t(4100))
        XCTAssertEqual(r.evaluate(at: 6100), .restartCamera(attempt: 2, backoff: .seconds(2)))
        r.policy.cameraRestartSucceeded(at: t(6500))
        XCTAssertEqual(r.evaluate(at: 6600), .waiting(.framesStalled, until: t(16_500)), "waiting for the first frame")
        XCTAssertEqual(r.policy.consecutiveFailures, 1)
        r.run(until: 9000)
        XCTAssertEqual(r.evaluate(at: 9000), .healthy)
        XCTAssertEqual(r.policy.consecutiveFailures, 0)
        // The next stall starts over at attempt 1 with the initial backoff.
        XCTAssertEqual(r.evaluate(at: 11_001), .waiting(.framesStalled, until: t(12_001)))
        XCTAssertEqual(r.evaluate(at: 12_001), .restartCamera(attempt: 1, backoff: .seconds(1)))
    }

    func testARestartThatOpensButNeverDeliversCountsAsFailed() {
        var r = Rig(WatchdogConfiguration(firstFrameTimeout: .seconds(5), maxConsecutiveRestartFailures: 2))
        r.run(until: 1000)
        _ = r.evaluate(at: 3001)
        XCTAssertEqual(r.evaluate(at: 4001), .restartCamera(attempt: 1, backoff: .seconds(1)))
        r.policy.cameraRestartSucceeded(at: t(4500))
        XCTAssertEqual(r.evaluate(at: 9500), .waiting(.framesStalled, until: t(9500)))
        XCTAssertEqual(r.evaluate(at: 9501), .waiting(.framesStalled, until: t(11_501)), "no frame: backing off for attempt 2")
        XCTAssertEqual(r.policy.consecutiveFailures, 1)
        XCTAssertEqual(r.evaluate(at: 11_501), .restartCamera(attempt: 2, backoff: .seconds(2)))
        r.policy.cameraRestartSucceeded(at: t(11_600))
        XCTAssertEqual(r.evaluate(at: 16_601), .giveUp(.framesStalled))
    }

    func testARestartThatNeverAnswersTimesOut() {
        var r = Rig(WatchdogConfiguration(restartTimeout: .seconds(3)))
        r.run(until: 1000)
        _ = r.evaluate(at: 3001)
        _ = r.evaluate(at: 4001)
        XCTAssertEqual(r.evaluate(at: 7001), .waiting(.framesStalled, until: t(7001)))
        XCTAssertEqual(r.evaluate(at: 7002), .waiting(.framesStalled, until: t(9002)))
        XCTAssertEqual(r.policy.consecutiveFailures, 1)
        // A late answer to the timed-out attempt is ignored.
        r.policy.cameraRestartSucceeded(at: t(7500))
        XCTAssertEqual(r.evaluate(at: 9002), .restartCamera(attempt: 2, backoff: .seconds(2)))
    }

    func testEncoderDeadlineOnlyWhileRecording() {
        var r = Rig(WatchdogConfiguration(stallGiveUp: .seconds(20)))
        r.run(until: 1000)
        r.policy.encoderStarted(at: t(1000))
        r.run(until: 6000)
        XCTAssertEqual(r.evaluate(at: 6000), .healthy, "deadline is start + 5 s, inclusive")
        r.run(until: 6001)
        XCTAssertEqual(r.evaluate(at: 6001), .unhealthy(.encoderStalled))
        r.policy.encoderProgress(at: t(6001))
        XCTAssertEqual(r.evaluate(at: 6001), .healthy)
        r.policy.encoderStopped()
        r.run(until: 30_000)
        XCTAssertEqual(r.evaluate(at: 30_000), .healthy, "no encoder deadline while not recording")
        r.policy.encoderStarted(at: t(30_000))
        r.run(until: 54_999)
        XCTAssertEqual(r.evaluate(at: 54_999), .unhealthy(.encoderStalled))
        r.run(until: 55_000)
        XCTAssertEqual(r.evaluate(at: 55_000), .giveUp(.encoderStalled), "stalled for 20 s: give up to systemd")
        XCTAssertEqual(WatchdogReason.encoderStalled.exitCode, 70)
    }

    /// The loop reports the clip recorder's last progress time, which until the new clip's
    /// encoder is open is still the previous clip's: it must not end the new clip at once
    /// (a browser test's `record start` right after a camera switch got a 2-frame clip).
    func testAStaleProgressTimeDoesNotEndANewRecording() {
        var r = Rig(WatchdogConfiguration(stallGiveUp: .seconds(20)))
        r.run(until: 60_000)
        r.policy.encoderStarted(at: t(60_000))
        r.policy.encoderProgress(at: t(10_000))  // the last clip's, a minute old
        r.run(until: 61_000)
        XCTAssertEqual(r.evaluate(at: 61_000), .healthy)
        r.run(until: 65_001)
        XCTAssertEqual(r.evaluate(at: 65_001), .unhealthy(.encoderStalled), "no real progress 5 s after the start")
    }

    func testHungStorageIsUnhealthyAReportedFailureIsNotByDefault() {
        var r = Rig(WatchdogConfiguration(storageTimeout: .seconds(10), stallGiveUp: .seconds(30)))
        r.run(until: 2000)
        r.policy.storageFailed(at: t(2000))
        r.run(until: 5000, storage: false)
        XCTAssertEqual(r.evaluate(at: 5000), .healthy, "a full card is shown on the LED, not restarted")
        r.run(until: 12_001, storage: false)
        XCTAssertEqual(r.evaluate(at: 12_001), .unhealthy(.storageStalled), "no storage answer for 10 s: hung I/O")
        r.policy.storageOK(at: t(12_001))
        XCTAssertEqual(r.evaluate(at: 12_001), .healthy)
        r.run(until: 52_001, storage: false)
        XCTAssertEqual(r.evaluate(at: 52_001), .giveUp(.storageStalled))
        XCTAssertEqual(WatchdogReason.storageStalled.exitCode, 74)
    }

    func testStrictStorageModeWithholdsThePingWhileStorageFails() {
        var r = Rig(WatchdogConfiguration(withholdPingOnStorageFailure: true))
        r.run(until: 2000)
        r.policy.storageFailed(at: t(2000))
        XCTAssertEqual(r.evaluate(at: 2000), .unhealthy(.storageFailing))
        r.policy.storageOK(at: t(2500))
        XCTAssertEqual(r.evaluate(at: 2500), .healthy)
    }

    func testNextDeadlineIsTheEarliestPendingOne() {
        var r = Rig()
        XCTAssertEqual(r.policy.nextDeadline, t(10_000), "first frame deadline before storage's 30 s")
        r.run(until: 1000)
        XCTAssertEqual(r.policy.nextDeadline, t(3000))
        _ = r.evaluate(at: 3001)
        XCTAssertEqual(r.policy.nextDeadline, t(4001), "the restart due time")
    }
}

/// The frame and encoder deadlines follow the camera's frame period (FramePace).
final class FramePaceTests: XCTestCase {
    func testALongExposureLengthensThePatienceAndAShortOneLeavesTheConfiguredTimeout() {
        var pace = FramePace(fps: 30)
        XCTAssertEqual(pace.patience(.seconds(2)), .seconds(2), "at 30 fps the configured timeout decides")
        var t = MonotonicTime(nanoseconds: 1_000_000_000)
        for _ in 0..<5 {
            t = t + .milliseconds(33)
            pace.frame(at: t, exposure: .microseconds(10_000))
        }
        XCTAssertEqual(pace.period, pace.nominal, "a 10 ms exposure fits in the 33 ms period, and so do frames 33 ms apart")
        t = t + .seconds(4)
        pace.frame(at: t, exposure: .seconds(4))
        XCTAssertEqual(pace.period, .seconds(4))
        XCTAssertEqual(pace.patience(.seconds(2)), .seconds(12), "three 4 s frames")
    }

    /// A camera slower than it says (vimc under emulation: a frame every 3 s) and no exposure
    /// reported: the intervals set the pace; one stall does not.
    func testTheIntervalsBetweenFramesSetThePaceButOneStallDoesNot() {
        var pace = FramePace(fps: 30)
        var t = MonotonicTime(nanoseconds: 1_000_000_000)
        for _ in 0..<4 {
            t = t + .seconds(3)
            pace.frame(at: t, exposure: nil)
        }
        XCTAssertEqual(pace.period, .seconds(3))
        XCTAssertEqual(pace.patience(.seconds(2)), .seconds(9))
        t = t + .seconds(20)  // a stall
        pace.frame(at: t, exposure: nil)
        XCTAssertEqual(pace.period, .seconds(3), "the shortest of the last three intervals")
    }

    func testTheWatchdogWaitsForFourSecondFrames() {
        let t0 = MonotonicTime(nanoseconds: 1_000_000_000)
        var w = WatchdogPolicy(configuration: WatchdogConfiguration(frameTimeout: .seconds(2)), startedAt: t0, fps: 30)
        w.frameArrived(at: t0, exposure: .seconds(4))
        XCTAssertEqual(w.evaluate(now: t0 + .seconds(4) + .milliseconds(100)), .healthy, "the next 4 s frame is not late yet")
        XCTAssertEqual(w.evaluate(now: t0 + .seconds(11)), .healthy, "nor after 11 s (the configured 2 s would have restarted)")
        XCTAssertNotEqual(w.evaluate(now: t0 + .seconds(13)), .healthy, "three frame periods without one")
    }
}
