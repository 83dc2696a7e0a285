// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import XCTest
@testable import ShutterHardware

/// Each start gets its own frame limits: video at 1/fps, a still as long as the
/// scene needs (issue 10: the video's FrameDurationLimits was persistent and so
/// also capped a still's exposure at 1/fps in the dark).
final class StartControlsTests: XCTestCase {
    private func limits(_ controls: [ControlSetting]) -> [Double]? {
        controls.first { $0.name == "FrameDurationLimits" }?.values
    }

    func testVideoIsFixedAtTheFrameRate() {
        var s = LibcameraCameraSettings()
        XCTAssertEqual(limits(s.startControls(for: .video)), [33_333, 33_333])
        s.framesPerSecond = 25
        XCTAssertEqual(limits(s.startControls(for: .video)), [40_000, 40_000])
        s.framesPerSecond = 0
        XCTAssertEqual(s.startControls(for: .video), [], "no rate: the pipeline's own")
    }

    /// The bug: the still inherited [33333, 33333]. Its longest frame is now
    /// `stillLongestFrame` (1 s), whatever the video rate.
    func testAStillIsNotCappedAtTheVideoFrameTime() throws {
        for fps in [30.0, 60, 120] {
            var s = LibcameraCameraSettings()
            s.framesPerSecond = fps
            let still = try XCTUnwrap(limits(s.startControls(for: .still)), "a still sets its own limits")
            let video = try XCTUnwrap(limits(s.startControls(for: .video)))
            XCTAssertEqual(still, [100, 1_000_000])
            XCTAssertGreaterThan(still[1], video[1] * 20, "\(fps) fps")
            XCTAssertLessThanOrEqual(still[0], video[0], "a bright still may be as short as a video frame")
        }
    }

    func testStillLimitsAreClampedToTheSensorMode() {
        let s = LibcameraCameraSettings()
        // A sensor whose mode allows up to 112 s (imx708): the configured 1 s wins.
        XCTAssertEqual(limits(s.startControls(for: .still, sensorRange: 8_000...112_000_000)), [8_000, 1_000_000])
        // A sensor that cannot go past 200 ms.
        XCTAssertEqual(limits(s.startControls(for: .still, sensorRange: 8_000...200_000)), [8_000, 200_000])
        // Video inside the range is left alone, outside it clamped.
        XCTAssertEqual(limits(s.startControls(for: .video, sensorRange: 8_000...200_000)), [33_333, 33_333])
        XCTAssertEqual(limits(s.startControls(for: .video, sensorRange: 50_000...200_000)), [50_000, 50_000])
    }

    func testALongManualShutterStretchesTheStillsLimit() throws {
        var s = LibcameraCameraSettings()
        s.controls.exposure.shutterUs = 4_000_000
        let still = try XCTUnwrap(limits(s.startControls(for: .still)))
        XCTAssertGreaterThan(still[1], 4_000_000)
        XCTAssertEqual(limits(s.startControls(for: .video)), [33_333, 33_333], "video keeps its rate")
        s.stillLongestFrame = .milliseconds(250)
        s.controls.exposure.shutterUs = 10_000
        s.controls.exposure.gain = 2
        XCTAssertEqual(limits(s.startControls(for: .still)), [100, 250_000], "a short shutter changes nothing")
    }

    /// Warm-up frames and the still itself may each take the longest frame in the dark.
    func testTheStillWaitCoversWarmUpAtTheLongestFrame() {
        var s = LibcameraCameraSettings()
        XCTAssertEqual(s.stillWarmupFrames, 2)
        XCTAssertGreaterThanOrEqual(s.stillWaitTimeout, .seconds(4))
        s.stillLongestFrame = .milliseconds(100)
        XCTAssertEqual(s.stillWaitTimeout, s.stillTimeout, "short frames: the configured timeout")
        s.stillLongestFrame = .seconds(2)
        s.stillWarmupFrames = 4
        XCTAssertGreaterThanOrEqual(s.stillWaitTimeout, .seconds(12))
    }
}
