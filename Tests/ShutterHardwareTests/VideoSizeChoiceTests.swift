// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import XCTest
@testable import ShutterHardware

/// The video size when the camera grants none asked (issue 22): chosen among the
/// sizes the video stream lists, nearest the first preference, never its largest
/// just because libcamera's validate() adjusted to it.
final class VideoSizeChoiceTests: XCTestCase {
    private func s(_ w: Int, _ h: Int) -> CameraSize { CameraSize(width: w, height: h) }

    /// What libcamera 0.7.1's StreamFormats::sizes() lists for the virtual camera of
    /// 1920x1080@30 and 4608x2592@10 (one NV12 range 1920x1080-4608x2592: the common
    /// sizes inside it), plus the range's two ends (the shim adds them), largest first.
    private var virtualCamera: [CameraSize] {
        [s(4608, 2592), s(4096, 2160), s(3840, 2400), s(3840, 2160), s(3440, 1440), s(3200, 2400), s(3840, 1600),
         s(3200, 2048), s(3200, 1800), s(3840, 1080), s(2560, 2048), s(2960, 1440), s(2560, 1600), s(2560, 1440),
         s(2560, 1080), s(2048, 1536), s(2160, 1080), s(2048, 1152), s(2048, 1080), s(1920, 1200), s(1920, 1080)]
    }

    func testAsked720pOnTheVirtualCameraGets1080pNeverTheLargest() {
        let c = VideoSizeChoice.candidates(asked: [s(1280, 720)], offered: virtualCamera)
        XCTAssertEqual(c.first, s(1920, 1080), "the next larger of the same aspect")
        XCTAssertEqual(Array(c.prefix(5)), [s(1920, 1080), s(2048, 1152), s(2560, 1440), s(3200, 1800), s(3840, 2160)],
                       "16:9 sizes first, smallest first")
        XCTAssertNotEqual(c.first, s(4608, 2592))
        XCTAssertEqual(Set(c), Set(virtualCamera), "every listed size stays a later fallback, each once")
        XCTAssertEqual(c.count, virtualCamera.count)
    }

    func testTheDecisionTheServiceTookBeforeIsReplaced() {
        // Before: libcamera adjusted 1280x720 to 4608x2592 and the service kept it.
        XCTAssertTrue(VideoSizeChoice.needsChoice(granted: s(4608, 2592), asked: [s(1280, 720)]))
        XCTAssertFalse(VideoSizeChoice.needsChoice(granted: s(1280, 720), asked: [s(1920, 1080), s(1280, 720)]),
                       "a granted preference is kept")
        XCTAssertFalse(VideoSizeChoice.needsChoice(granted: s(640, 480), asked: []), "nothing asked: the pipeline's default")
    }

    func testAnAskedSizeTheStreamListsComesFirstInTheOrderAsked() {
        let c = VideoSizeChoice.candidates(asked: [s(1920, 1080), s(1280, 720)],
                                           offered: [s(2592, 1944), s(1280, 720), s(640, 480)])
        XCTAssertEqual(c.first, s(1280, 720))
        XCTAssertEqual(c, [s(1280, 720), s(2592, 1944), s(640, 480)], "then larger than the first preference, then smaller")
    }

    func testAWebcamWithoutTheAspectGetsTheSmallestThatCoversIt() {
        // A 4:3 USB webcam asked for 1280x720: 1280x960 covers it (scaled later), 1600x1200 is farther.
        let c = VideoSizeChoice.candidates(asked: [s(1280, 720)], offered: [s(1600, 1200), s(1280, 960), s(800, 600), s(640, 480)])
        XCTAssertEqual(c, [s(1280, 960), s(1600, 1200), s(800, 600), s(640, 480)])
    }

    func testACameraSmallerThanAskedGetsTheLargestOfTheAspectBelow() {
        let c = VideoSizeChoice.candidates(asked: [s(1920, 1080)], offered: [s(1024, 768), s(1280, 720), s(640, 360)])
        XCTAssertEqual(c, [s(1280, 720), s(640, 360), s(1024, 768)], "16:9 below first, largest first")
    }

    func testNothingListedOrAskedGivesNoCandidates() {
        XCTAssertEqual(VideoSizeChoice.candidates(asked: [s(1280, 720)], offered: []), [])
        XCTAssertEqual(VideoSizeChoice.candidates(asked: [], offered: virtualCamera), [])
    }

    func testAspectAllowsOnePercent() {
        XCTAssertTrue(VideoSizeChoice.sameAspect(s(1366, 768), s(1920, 1080)))
        XCTAssertFalse(VideoSizeChoice.sameAspect(s(1920, 1200), s(1920, 1080)))
    }
}
