// SPDX-License-Identifier: BSD-2-Clause
import XCTest
@testable import ShutterCore

/// The gesture rules of issue 2, through the replay (the same recognizer the daemon runs).
final class GestureReplayTests: XCTestCase {
    private func replay(_ trace: String, _ settings: GestureSettings = GestureSettings()) throws -> [String] {
        GestureReplay.run(try GestureReplay.parse(trace), settings: settings).map(\.json)
    }

    private func g(_ name: String, _ s: Int64, _ e: Int64?) -> String {
        GestureReplay.Gesture(name: name, startMs: s, endMs: e).json
    }

    func testJSONShape() {
        XCTAssertEqual(g("tap", 100, 300), #"{"gesture":"tap","start_ms":100,"end_ms":300}"#)
        XCTAssertEqual(g("hold", 100, nil), #"{"gesture":"hold","start_ms":100,"end_ms":null}"#)
    }

    func testSimpleTap() throws {
        XCTAssertEqual(try replay("0 0\n100 1\n300 0\n400 0\n"), [g("tap", 100, 300)])
    }

    func testReleaseResolvedExactlyAtEndOfInput() throws {
        // Steady for exactly stabilityMs when the input ends: resolved.
        XCTAssertEqual(try replay("100 1\n300 0\n320 0"), [g("tap", 100, 300)])
    }

    func testBurstUnresolvedAtEndIsIgnored() throws {
        XCTAssertEqual(try replay("100 1\n300 0\n319 0"), [])
        // The press itself unresolved: nothing at all.
        XCTAssertEqual(try replay("0 0\n100 1\n110 1"), [])
    }

    func testBounceOnPressIsDatedAtFirstEdge() throws {
        let t = "0 0\n100 1\n101 0\n103 1\n104 0\n106 1\n500 0\n600 0"
        XCTAssertEqual(try replay(t), [g("tap", 100, 500)])
    }

    func testBounceOnRelease() throws {
        let t = "0 0\n100 1\n500 0\n502 1\n503 0\n504 1\n505 0\n600 0"
        XCTAssertEqual(try replay(t), [g("tap", 100, 500)])
    }

    func testGlitchShorterEqualLongerThanFilter() throws {
        XCTAssertEqual(try replay("0 0\n100 1\n119 0\n200 0"), [], "19 ms glitch is filtered")
        XCTAssertEqual(try replay("0 0\n100 1\n120 0\n200 0"), [g("tap", 100, 120)], "steady for exactly 20 ms is accepted")
        XCTAssertEqual(try replay("0 0\n100 1\n121 0\n200 0"), [g("tap", 100, 121)])
    }

    func testGlitchWhilePressedDoesNotEndThePress() throws {
        let t = "0 0\n100 1\n400 0\n410 1\n800 0\n900 0"
        XCTAssertEqual(try replay(t), [g("tap", 100, 800)])
    }

    func testReleaseExactlyAtHoldMsIsAHoldAndOneMsBeforeIsATap() throws {
        XCTAssertEqual(try replay("0 0\n100 1\n1100 0\n1200 0"), [g("hold", 100, 1100)])
        XCTAssertEqual(try replay("0 0\n100 1\n1099 0\n1200 0"), [g("tap", 100, 1099)])
    }

    func testCustomHoldMs() throws {
        let s = GestureSettings(holdMs: 500)
        XCTAssertEqual(try replay("0 0\n100 1\n600 0\n700 0", s), [g("hold", 100, 600)])
        XCTAssertEqual(try replay("0 0\n100 1\n599 0\n700 0", s), [g("tap", 100, 599)])
    }

    func testHoldStillPressedAtEnd() throws {
        XCTAssertEqual(try replay("0 0\n100 1\n2000 1"), [g("hold", 100, nil)])
        XCTAssertEqual(try replay("0 0\n100 1\n1100 1"), [g("hold", 100, nil)], "reached holdMs exactly")
        XCTAssertEqual(try replay("0 0\n100 1\n1099 1"), [], "not yet a hold")
        // A release still settling at the end is ignored: still pressed.
        XCTAssertEqual(try replay("0 0\n100 1\n2000 0\n2010 0"), [g("hold", 100, nil)])
    }

    func testMaxDurationEndsTheHoldAndNeedsARelease() throws {
        let s = GestureSettings(maxHoldMs: 5000)
        XCTAssertEqual(try replay("0 0\n100 1\n7000 0\n7100 0", s), [g("hold", 100, 5100)])
        XCTAssertEqual(try replay("0 0\n100 1\n5100 1", s), [g("hold", 100, 5100)], "max reached at the end")
        XCTAssertEqual(try replay("0 0\n100 1\n9000 1", s), [g("hold", 100, 5100)])
        // After the release, a new gesture works.
        XCTAssertEqual(try replay("0 0\n100 1\n7000 0\n7100 1\n7300 0\n7400 0", s),
                       [g("hold", 100, 5100), g("tap", 7100, 7300)])
        // Default max is 60 s (video.maxSeconds).
        XCTAssertEqual(try replay("0 0\n100 1\n70000 0\n70100 0"), [g("hold", 100, 60100)])
    }

    func testReleaseJustBeforeMax() throws {
        let s = GestureSettings(maxHoldMs: 5000)
        XCTAssertEqual(try replay("0 0\n100 1\n5099 0\n5200 0", s), [g("hold", 100, 5099)])
    }

    func testDoubleTapOffGivesSeparateTaps() throws {
        let t = "0 0\n100 1\n200 0\n300 1\n400 0\n600 0"
        XCTAssertEqual(try replay(t), [g("tap", 100, 200), g("tap", 300, 400)])
    }

    func testDoubleTapOn() throws {
        let s = GestureSettings(doubleTapMs: 300)
        XCTAssertEqual(try replay("0 0\n100 1\n200 0\n400 1\n500 0\n1000 0", s), [g("double_tap", 100, 500)])
        XCTAssertEqual(try replay("0 0\n100 1\n200 0\n500 1\n600 0\n1000 0", s),
                       [g("double_tap", 100, 600)], "press exactly doubleTapMs after the release")
        XCTAssertEqual(try replay("0 0\n100 1\n200 0\n501 1\n600 0\n1000 0", s),
                       [g("tap", 100, 200), g("tap", 501, 600)])
    }

    func testThirdQuickTapStartsAFreshSequence() throws {
        let s = GestureSettings(doubleTapMs: 300, shutdownTaps: 0)
        let t = "0 0\n100 1\n200 0\n300 1\n400 0\n500 1\n600 0\n2000 0"
        XCTAssertEqual(try replay(t, s), [g("double_tap", 100, 400), g("tap", 500, 600)])
        let four = "0 0\n100 1\n200 0\n300 1\n400 0\n500 1\n600 0\n700 1\n800 0\n2000 0"
        XCTAssertEqual(try replay(four, s), [g("double_tap", 100, 400), g("double_tap", 500, 800)])
    }

    func testTapThenHoldWithinTheDoubleTapWindow() throws {
        let s = GestureSettings(doubleTapMs: 300)
        XCTAssertEqual(try replay("0 0\n100 1\n200 0\n300 1\n1500 0\n1600 0", s),
                       [g("tap", 100, 200), g("hold", 300, 1500)])
    }

    func testPendingTapAtEndOfInputIsATap() throws {
        let s = GestureSettings(doubleTapMs: 300)
        XCTAssertEqual(try replay("0 0\n100 1\n200 0\n250 0", s), [g("tap", 100, 200)])
    }

    func testBouncingSecondPressDatedInsideTheWindow() throws {
        let s = GestureSettings(doubleTapMs: 300)
        // The second press's burst starts exactly at the window's end, bounces, settles later.
        let t = "0 0\n100 1\n200 0\n500 1\n502 0\n505 1\n700 0\n900 0"
        XCTAssertEqual(try replay(t, s), [g("double_tap", 100, 700)])
    }

    func testShutdownSequenceKeepsItsTapsAndClip() throws {
        // Three quick taps, then a hold kept down through holdMs + the 3 s countdown.
        let taps = "0 0\n100 1\n150 0\n300 1\n350 0\n500 1\n550 0\n"
        XCTAssertEqual(try replay(taps + "700 1\n6000 0\n6100 0"),
                       [g("tap", 100, 150), g("tap", 300, 350), g("tap", 500, 550),
                        g("hold", 700, 4700), g("shutdown", 100, 4700)])
        // Released during the countdown: just a hold, no shutdown.
        XCTAssertEqual(try replay(taps + "700 1\n3000 0\n3100 0"),
                       [g("tap", 100, 150), g("tap", 300, 350), g("tap", 500, 550), g("hold", 700, 3000)])
        // A slow gap breaks the sequence: a plain hold.
        XCTAssertEqual(try replay(taps + "1000 1\n6000 0\n6100 0"),
                       [g("tap", 100, 150), g("tap", 300, 350), g("tap", 500, 550), g("hold", 1000, 6000)])
        // Two taps are not enough.
        XCTAssertEqual(try replay("0 0\n300 1\n350 0\n500 1\n550 0\n700 1\n6000 0\n6100 0"),
                       [g("tap", 300, 350), g("tap", 500, 550), g("hold", 700, 6000)])
        // Disabled.
        XCTAssertEqual(try replay(taps + "700 1\n6000 0\n6100 0", GestureSettings(shutdownTaps: 0)),
                       [g("tap", 100, 150), g("tap", 300, 350), g("tap", 500, 550), g("hold", 700, 6000)])
    }

    func testParseErrorsNameTheLine() {
        func err(_ t: String) -> GestureReplay.ParseError? {
            do { _ = try GestureReplay.parse(t); return nil } catch { return error as? GestureReplay.ParseError }
        }
        XCTAssertEqual(err("0 0\nabc 1\n")?.line, 2)
        XCTAssertEqual(err("0 0\n10 2\n")?.line, 2)
        XCTAssertEqual(err("0 0\n10\n")?.line, 2)
        XCTAssertEqual(err("0 0\n10 1 1\n")?.line, 2)
        XCTAssertEqual(err("0 0\n10 1\n\n5 0\n")?.line, 4)
        XCTAssertNotNil(err("0 0\n10 1\n\n5 0\n")?.message.contains("backwards"))
        XCTAssertEqual(err("1.5 0")?.line, 1)
        XCTAssertNil(err("0 0\r\n10 1\r\n"))
    }

    func testEmptyInputGivesNothing() throws {
        XCTAssertEqual(try replay(""), [])
        XCTAssertEqual(try replay("5 1"), [])
    }
}
