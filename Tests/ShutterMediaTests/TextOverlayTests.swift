// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import XCTest
@testable import ShutterMedia

/// What the stamp says, from which clock, and that a second's stamp is ready before its frames.
final class TextOverlayTests: XCTestCase {
    func testAnUntrustedClockDrawsNoTimeOnlyTheName() throws {
        let w = 1920, h = 1080, t = OverlayFixture.start
        XCTAssertNil(try OverlayFixture.overlay(name: "", trusted: false).placed(at: t, width: w, height: h),
                     "no name and no trusted time: nothing drawn")
        let named = try XCTUnwrap(OverlayFixture.overlay(name: "Shed", trusted: false).placed(at: t, width: w, height: h))
        XCTAssertEqual(named.stamp.text, "Shed")
        let timed = try XCTUnwrap(OverlayFixture.overlay(name: "", trusted: true).placed(at: t, width: w, height: h))
        XCTAssertEqual(timed.stamp.text, "2026-06-01 12:00:00")
    }

    func testTheFramesTimeIsItsExposureSecondInLocalTime() throws {
        let t = OverlayFixture.start
        let o = try OverlayFixture.overlay(name: "")
        XCTAssertEqual(o.placed(at: t + .milliseconds(999), width: 1920, height: 1080)?.stamp.text, "2026-06-01 12:00:00")
        XCTAssertEqual(o.placed(at: t + .milliseconds(1000), width: 1920, height: 1080)?.stamp.text, "2026-06-01 12:00:01")
        XCTAssertEqual(o.placed(at: t - .milliseconds(1), width: 1920, height: 1080)?.stamp.text, "2026-06-01 11:59:59")
        XCTAssertEqual(OverlayText.text(format: "%H:%M %z", name: "", localSeconds: OverlayFixture.epoch + 3600,
                                        utcOffsetSeconds: 3600), "13:00 +0100")
    }

    /// The first frame of a second renders it (a miss); the next second is rendered ahead on
    /// the overlay's queue, so its first frame only blends.
    func testTheNextSecondIsRenderedAhead() async throws {
        let work = InFlight()
        let o = try OverlayFixture.overlay(work: work)
        let t = OverlayFixture.start
        _ = o.placed(at: t, width: 1920, height: 1080)
        await work.untilIdle()
        XCTAssertEqual(o.figures.misses, 1)
        XCTAssertEqual(o.figures.renderedAhead, 1)
        for i in 1...3 {
            XCTAssertEqual(o.placed(at: t + .seconds(i), width: 1920, height: 1080)?.stamp.text,
                           "Shed  2026-06-01 12:00:0\(i)")
            await work.untilIdle()
        }
        XCTAssertEqual(o.figures.misses, 1, "seconds 1...3 were ready before their frames")
        XCTAssertEqual(o.figures.renderedAhead, 4)
        XCTAssertEqual(o.figures.trusted, true)
    }

    /// The loop prepares every frame's second for the sizes it knows (video, still stream):
    /// a photo of the still stream's size then finds its stamp ready, with no encoder running.
    func testPreparedSecondsAreReadyForEverySize() async throws {
        let work = InFlight()
        let o = try OverlayFixture.overlay(work: work)
        let t = OverlayFixture.start
        o.prepare(at: t, sizes: [(640, 360), (4608, 2592)])
        await work.untilIdle()
        XCTAssertEqual(o.figures.renderedAhead, 4, "this second and the next, two sizes")
        XCTAssertEqual(o.placed(at: t, width: 4608, height: 2592)?.stamp.text, "Shed  2026-06-01 12:00:00")
        XCTAssertEqual(o.placed(at: t + .milliseconds(1500), width: 640, height: 360)?.stamp.text, "Shed  2026-06-01 12:00:01")
        XCTAssertEqual(o.figures.misses, 0)
        o.prepare(at: t + .milliseconds(500), sizes: [(640, 360)])
        await work.untilIdle()
        XCTAssertEqual(o.figures.renderedAhead, 5, "a second is prepared once; the 640x360 hit at 12:00:01 asked for 12:00:02")
    }

    /// A text too long for a small picture, even made smaller: nothing drawn, and not rendered
    /// again for every frame.
    func testATextThatCannotFitIsNotDrawnNorRenderedAgain() throws {
        let o = try OverlayFixture.overlay(name: String(repeating: "W", count: 60), size: 20)
        let t = OverlayFixture.start
        XCTAssertNil(o.placed(at: t, width: 160, height: 120))
        XCTAssertNil(o.placed(at: t + .milliseconds(40), width: 160, height: 120))
        XCTAssertEqual(o.figures.misses, 1, "tried once")
        XCTAssertNotNil(o.placed(at: t, width: 4608, height: 2592), "a big picture has room")
    }

    func testAFontThatIsNotThereOrNotAFontIsAnErrorNamingTheFile() {
        XCTAssertThrowsError(try OverlayFont(path: "/nonexistent/font.ttf")) { e in
            XCTAssertTrue("\(e)".contains("/nonexistent/font.ttf"), "\(e)")
        }
        XCTAssertThrowsError(try OverlayFont(path: "/etc/hostname")) { e in
            XCTAssertTrue("\(e)".contains("not a font"), "\(e)")
        }
    }
}
