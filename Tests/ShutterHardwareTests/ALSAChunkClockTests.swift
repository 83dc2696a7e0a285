// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import XCTest
@testable import ShutterHardware

/// The dating of audio chunks: sample clock, steered to ALSA's measurements.
final class ALSAChunkClockTests: XCTestCase {
    func testSteadyChunksAreExactlyContiguous() {
        var clock = AudioChunkClock(sampleRate: 48_000)
        let start = MonotonicTime.milliseconds(1_000)
        var expected = start
        for i in 0..<100 {
            // Measurements jitter by up to ±2 ms around the truth.
            let jitter = Duration.microseconds((i % 5 - 2) * 1000)
            let (t, gap) = clock.stamp(frames: 480, measuredStart: start + .milliseconds(Int64(i * 10)) + jitter)
            XCTAssertEqual(gap, 0)
            if i == 0 { expected = t }
            XCTAssertLessThan(abs((t - expected).nanoseconds), 1_000_000, "chunk \(i) strays from the sample clock")
            expected = t + .milliseconds(10)
        }
    }

    func testAGapIsMeasuredInFrames() {
        var clock = AudioChunkClock(sampleRate: 48_000)
        _ = clock.stamp(frames: 480, measuredStart: .milliseconds(0))
        // The next chunk should start at 10 ms; it starts at 110 ms: 100 ms = 4800 frames lost.
        let (t, gap) = clock.stamp(frames: 480, measuredStart: .milliseconds(110))
        XCTAssertEqual(t, .milliseconds(110))
        XCTAssertEqual(gap, 4_800)
    }

    func testTimestampsNeverGoBackwards() {
        var clock = AudioChunkClock(sampleRate: 48_000)
        let (t0, _) = clock.stamp(frames: 480, measuredStart: .milliseconds(500))
        // A measurement far in the past (a plugin without pacing) must not move time back.
        let (t1, _) = clock.stamp(frames: 480, measuredStart: .milliseconds(0))
        XCTAssertGreaterThanOrEqual(t1, t0)
    }

    func testDriftIsSteeredOut() {
        // The card runs 0.1 % fast against CLOCK_MONOTONIC: the stamps follow the kernel clock.
        var clock = AudioChunkClock(sampleRate: 48_000)
        var last = MonotonicTime.milliseconds(0)
        for i in 0..<1_000 {
            let truth = MonotonicTime(nanoseconds: Int64(i) * 9_990_000)
            last = clock.stamp(frames: 480, measuredStart: truth).time
            if i == 999 { XCTAssertLessThan(abs((last - truth).nanoseconds), 2_000_000) }
        }
    }
}
