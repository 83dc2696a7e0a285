// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import XCTest
@testable import ShutterHardware

/// The still stream beside video, with the Camera Module 3 (imx708) figures of
/// The IMX708's sensor modes (docs/control-and-api.md, The moment of the press): modes 4608×2592 @14.35, 2304×1296 @56.03,
/// 1536×864 @120.13; the mode follows the largest stream.
final class StillStreamChoiceTests: XCTestCase {
    private let full = CameraSize(width: 4608, height: 2592)
    private let binned = CameraSize(width: 2304, height: 1296)
    private let cropped = CameraSize(width: 1536, height: 864)
    private let hd = CameraSize(width: 1920, height: 1080)
    /// Each mode's shortest frame in µs, as the Raspberry Pi IPA reports it after configure.
    private var shortestFrame: [CameraSize: Double] {
        [full: 1_000_000 / 14.35, binned: 1_000_000 / 56.03, cropped: 1_000_000 / 120.13]
    }

    /// The mode a Pi picks for a still stream of `size` beside 1080p: the smallest that holds it.
    private func imx708(_ size: CameraSize) -> StillStreamChoice.Attempt {
        let mode = [cropped, binned, full].first { size.fits(in: $0) } ?? full
        return .granted(minimumFrameMicroseconds: shortestFrame[mode])
    }

    func testCandidatesAreTheStillSizesThenTheSensorModesLargerThanVideo() {
        XCTAssertEqual(StillStreamChoice.candidates(stillSizes: [full], sensorSizes: [cropped, full, binned], video: hd),
                       [full, binned], "1536x864 is smaller than the video; 4608x2592 only once")
        XCTAssertEqual(StillStreamChoice.candidates(stillSizes: [hd], sensorSizes: [], video: hd), [],
                       "a still stream the size of video adds nothing")
        XCTAssertEqual(StillStreamChoice.candidates(stillSizes: [CameraSize(width: 2000, height: 1000)], sensorSizes: [],
                                                    video: hd), [], "shorter than the video on one side")
    }

    func testRateIsKeptWhenTheModesShortestFrameFitsTheVideoPeriod() {
        XCTAssertFalse(StillStreamChoice.keepsRate(minimumFrameMicroseconds: 69_686, framesPerSecond: 30))
        XCTAssertTrue(StillStreamChoice.keepsRate(minimumFrameMicroseconds: 17_848, framesPerSecond: 30))
        XCTAssertTrue(StillStreamChoice.keepsRate(minimumFrameMicroseconds: 69_686, framesPerSecond: 14))
        XCTAssertTrue(StillStreamChoice.keepsRate(minimumFrameMicroseconds: 33_400, framesPerSecond: 30), "rounding slack")
        XCTAssertFalse(StillStreamChoice.keepsRate(minimumFrameMicroseconds: 34_000, framesPerSecond: 30))
        XCTAssertTrue(StillStreamChoice.keepsRate(minimumFrameMicroseconds: nil, framesPerSecond: 30), "unknown limits")
        XCTAssertTrue(StillStreamChoice.keepsRate(minimumFrameMicroseconds: 69_686, framesPerSecond: 0), "the pipeline's rate")
    }

    func testCameraModule3At30fpsGetsTheBinnedModeAndAt10fpsTheFullSensor() {
        let candidates = StillStreamChoice.candidates(stillSizes: [full], sensorSizes: [full, binned, cropped], video: hd)
        var tried: [CameraSize] = []
        let at30 = StillStreamChoice.choose(candidates: candidates, video: hd, framesPerSecond: 30) {
            tried.append($0)
            return imx708($0)
        }
        XCTAssertEqual(at30, .stillStream(binned))
        XCTAssertEqual(tried, [full, binned], "the full size was tried first and refused for the rate")
        XCTAssertEqual(StillStreamChoice.choose(candidates: candidates, video: hd, framesPerSecond: 10, attempt: imx708),
                       .stillStream(full))
    }

    func testOneStreamPipelineStopsAtTheFirstTry() {
        var tries = 0
        let outcome = StillStreamChoice.choose(candidates: [full, binned], video: hd, framesPerSecond: 30) { _ in
            tries += 1
            return .oneStream
        }
        XCTAssertEqual(outcome, .none("the camera's pipeline gives one stream only"))
        XCTAssertEqual(tries, 1)
    }

    func testNoneKeepsTheRateSaysWhyForEachSize() {
        let outcome = StillStreamChoice.choose(candidates: [full, binned], video: hd, framesPerSecond: 60) { size in
            size == full ? .granted(minimumFrameMicroseconds: 69_686) : .notGranted
        }
        XCTAssertEqual(outcome, .none("none beside 60 fps video: 4608x2592 only at 14.4 fps, 2304x1296 not granted beside 1920x1080"))
        XCTAssertEqual(StillStreamChoice.choose(candidates: [], video: hd, framesPerSecond: 30) { _ in .oneStream },
                       .none("no still size larger than the video's 1920x1080"))
    }
}

/// A pipeline without a Raw role (libcamera's virtual cameras): the still stream's
/// candidates come from what the StillCapture role's stream lists (issue 22).
final class StillStreamWithoutRawRoleTests: XCTestCase {
    private let full = CameraSize(width: 4608, height: 2592)
    private let hd = CameraSize(width: 1920, height: 1080)

    func testTheStillRolesSizesStandInForTheSensorModes() {
        let stillRole = [full, CameraSize(width: 4096, height: 2160), CameraSize(width: 2560, height: 1440), hd]
        let offered = StillStreamChoice.offeredSizes(sensor: [], stillRole: stillRole)
        XCTAssertEqual(offered, stillRole)
        // The board's still size is the video's: before, no candidate at all ("no still stream beside video").
        let candidates = StillStreamChoice.candidates(stillSizes: [hd], sensorSizes: offered, video: hd)
        XCTAssertEqual(candidates.first, full, "the largest the still stream lists")
        XCTAssertFalse(candidates.contains(hd))
        let outcome = StillStreamChoice.choose(candidates: candidates, video: hd, framesPerSecond: 30) {
            $0 == self.full ? .granted(minimumFrameMicroseconds: nil) : .notGranted
        }
        XCTAssertEqual(outcome, .stillStream(full))
    }

    func testTheSensorModesWinWhereThereIsARawRole() {
        let binned = CameraSize(width: 2304, height: 1296)
        XCTAssertEqual(StillStreamChoice.offeredSizes(sensor: [full, binned], stillRole: [hd]), [full, binned])
    }
}
