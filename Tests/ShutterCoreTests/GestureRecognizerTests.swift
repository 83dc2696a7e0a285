// SPDX-License-Identifier: BSD-2-Clause
import XCTest
@testable import ShutterCore

/// The live side of the recognizer: what the daemon sees, and when.
final class GestureRecognizerTests: XCTestCase {
    private func edge(_ pressed: Bool, _ ms: Int64) -> ButtonEdge { ButtonEdge(pressed: pressed, time: .milliseconds(ms)) }

    func testPressIsReportedOnceSettledAndDatedAtTheFirstEdge() {
        var r = GestureRecognizer(settings: GestureSettings())
        XCTAssertEqual(r.feed(edge(true, 100)), [])
        XCTAssertEqual(r.feed(edge(false, 101)), [])
        XCTAssertEqual(r.feed(edge(true, 102)), [])
        XCTAssertEqual(r.nextDeadline, .milliseconds(122))
        XCTAssertEqual(r.advance(to: .milliseconds(121)), [])
        XCTAssertEqual(r.advance(to: .milliseconds(122)), [.pressed(at: .milliseconds(100))])
        XCTAssertTrue(r.isPressed)
        XCTAssertEqual(r.nextDeadline, .milliseconds(1100), "the hold decision is next")
        XCTAssertEqual(r.advance(to: .milliseconds(1100)),
                       [.holdStarted(pressedAt: .milliseconds(100), at: .milliseconds(1100))])
        XCTAssertEqual(r.nextDeadline, .milliseconds(60_100), "then the max duration")
    }

    func testReleaseBurstStraddlingHoldMsIsDecidedByItsFirstEdge() {
        var r = GestureRecognizer(settings: GestureSettings())
        _ = r.feed(edge(true, 100))
        XCTAssertEqual(r.advance(to: .milliseconds(200)), [.pressed(at: .milliseconds(100))])
        _ = r.feed(edge(false, 1099))
        _ = r.feed(edge(true, 1100))
        _ = r.feed(edge(false, 1101))
        // At 1100 the release burst (from 1099) is unresolved: no hold yet.
        XCTAssertEqual(r.advance(to: .milliseconds(1120)), [])
        XCTAssertEqual(r.advance(to: .milliseconds(1121)),
                       [.tap(start: .milliseconds(100), end: .milliseconds(1099))])
    }

    func testGlitchAcrossHoldMsMakesALateButCorrectlyDatedHold() {
        var r = GestureRecognizer(settings: GestureSettings())
        _ = r.feed(edge(true, 100))
        _ = r.advance(to: .milliseconds(200))
        _ = r.feed(edge(false, 1095))
        XCTAssertEqual(r.feed(edge(true, 1105)), [])
        XCTAssertEqual(r.advance(to: .milliseconds(1125)),
                       [.holdStarted(pressedAt: .milliseconds(100), at: .milliseconds(1100))])
    }

    func testShutdownCountdownEventsAndCancel() {
        var r = GestureRecognizer(settings: GestureSettings())
        var events: [GestureEvent] = []
        for (p, q) in [(100, 150), (300, 350), (500, 550)] {
            events += r.feed(edge(true, Int64(p)))
            events += r.feed(edge(false, Int64(q)))
        }
        events += r.feed(edge(true, 700))
        events += r.advance(to: .milliseconds(1700))
        XCTAssertEqual(Array(events.suffix(3)), [
            .pressed(at: .milliseconds(700)),
            .holdStarted(pressedAt: .milliseconds(700), at: .milliseconds(1700)),
            .shutdownCountdown(start: .milliseconds(700), deadline: .milliseconds(4700)),
        ])
        XCTAssertEqual(r.feed(edge(false, 2000)), [])
        XCTAssertEqual(r.advance(to: .milliseconds(2020)),
                       [.hold(start: .milliseconds(700), end: .milliseconds(2000)), .shutdownCancelled(at: .milliseconds(2000))])
    }
}
