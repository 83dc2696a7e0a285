// SPDX-License-Identifier: BSD-2-Clause
import XCTest
@testable import ShutterCore

/// A trigger input's rules on the times they are given: debounce, hold-off, windows, a
/// clip's end while active + N s. Each case is what a sensor does on a real line.
final class TriggerRulesTests: XCTestCase {
    func t(_ ms: Int64) -> MonotonicTime { MonotonicTime(nanoseconds: 1_000_000_000_000 + ms * 1_000_000) }

    func rules(_ action: TriggerRules.Action, holdOffMs: Int64 = 10_000, stabilityMs: Int64 = 20) -> TriggerRules {
        TriggerRules(settings: .init(action: action, holdOff: .milliseconds(holdOffMs), stability: .milliseconds(stabilityMs)))
    }

    /// Feeds (time, level) edges, then advances to `end`: every event, in order.
    func run(_ r: inout TriggerRules, _ edges: [(Int64, Bool)], until end: Int64, windowOpen: Bool = true) -> [TriggerRules.Event] {
        var out: [TriggerRules.Event] = []
        for (ms, level) in edges {
            // As the loop does: what fell due before the edge is decided at its time.
            if let d = r.nextDeadline, d < t(ms) { out += r.advance(to: d, windowOpen: windowOpen) }
            out += r.feed(active: level, at: t(ms), windowOpen: windowOpen)
        }
        while let d = r.nextDeadline, d <= t(end) { out += r.advance(to: d, windowOpen: windowOpen) }
        out += r.advance(to: t(end), windowOpen: windowOpen)
        return out
    }

    func fired(_ events: [TriggerRules.Event]) -> [MonotonicTime] {
        events.compactMap { if case .fired(let at) = $0 { return at } else { return nil } }
    }

    func ignored(_ events: [TriggerRules.Event]) -> [TriggerRules.Ignored] {
        events.compactMap { if case .ignored(_, let why) = $0 { return why } else { return nil } }
    }

    /// A PIR's pulse train: high 1 s every 3 s. Within the 10 s hold-off the retriggers fire
    /// nothing; the first activation after it fires again.
    func testAPIRPulseTrainFiresOnceWithinTheHoldOff() {
        var r = rules(.photo)
        let pulses: [(Int64, Bool)] = [0, 3000, 6000, 9000, 12_000].flatMap { [($0, true), ($0 + 1000, false)] }
        let events = run(&r, pulses, until: 14_000)
        XCTAssertEqual(fired(events), [t(0), t(12_000)], "\(events)")
        XCTAssertEqual(ignored(events), [.holdOff, .holdOff, .holdOff])
        XCTAssertFalse(r.isActive)
    }

    /// A burst fires once per activation too: the count is the service's to ask for.
    func testABurstIsOneFiring() {
        var r = rules(.burst(count: 3), holdOffMs: 5000)
        let events = run(&r, [(0, true), (500, false), (1000, true), (1500, false)], until: 3000)
        XCTAssertEqual(fired(events), [t(0)])
    }

    /// A clip trigger's clip goes on while the pulses come, and ends `after` past the last one's fall.
    func testAPulseTrainKeepsOneClipGoingUntilAfterTheLastFall() {
        var r = rules(.clip(after: .seconds(10)), holdOffMs: 1000)
        let pulses: [(Int64, Bool)] = [0, 3000, 6000].flatMap { [($0, true), ($0 + 1000, false)] }
        var events = run(&r, pulses, until: 16_999)
        XCTAssertEqual(fired(events), [t(0)], "\(events)")
        XCTAssertEqual(events.filter { if case .extended = $0 { return true } else { return false } }.count, 2)
        XCTAssertFalse(events.contains { if case .clipEnds = $0 { return true } else { return false } }, "\(events)")
        XCTAssertEqual(r.nextDeadline, t(17_000), "the end: the last fall (7 s) + 10 s")
        events = r.advance(to: t(17_000), windowOpen: true)
        XCTAssertEqual(events, [.clipEnds(at: t(17_000))])
        XCTAssertNil(r.nextDeadline)
    }

    /// A door held open 20 s: one clip, ending 10 s after it closed.
    func testADoorHeldOpenMakesOneClipEndingAfterItCloses() {
        var r = rules(.clip(after: .seconds(10)))
        let events = run(&r, [(0, true), (20_000, false)], until: 40_000)
        XCTAssertEqual(fired(events), [t(0)])
        XCTAssertEqual(events.filter { if case .clipEnds = $0 { return true } else { return false } },
                       [.clipEnds(at: t(30_000))])
    }

    /// A contact bouncing at its closing and at its opening: one activation, dated at the
    /// first edge; the release's bounces (an active edge 20 s after the firing) fire nothing.
    func testBouncingContactsMakeOneActivation() {
        var r = rules(.photo, holdOffMs: 5000)
        let bounceIn: [(Int64, Bool)] = [(0, true), (2, false), (3, true), (5, false), (8, true)]
        let bounceOut: [(Int64, Bool)] = [(20_000, false), (20_002, true), (20_004, false), (20_005, true), (20_007, false)]
        let events = run(&r, bounceIn + bounceOut, until: 21_000)
        XCTAssertEqual(fired(events), [t(0)], "\(events)")
        XCTAssertEqual(ignored(events), [])
        XCTAssertEqual(events.filter { if case .changed = $0 { return true } else { return false } },
                       [.changed(active: true, at: t(0)), .changed(active: false, at: t(20_000))])
    }

    /// A glitch shorter than the stability time is no activation at all.
    func testAGlitchIsNothing() {
        var r = rules(.photo)
        let events = run(&r, [(0, true), (5, false)], until: 1000)
        XCTAssertEqual(events, [])
    }

    /// Outside the windows an activation fires nothing and starts no hold-off.
    func testOutsideTheWindowsNothingFiresAndTheHoldOffDoesNotStart() {
        var r = rules(.photo)
        var events = run(&r, [(0, true), (1000, false)], until: 2000, windowOpen: false)
        XCTAssertEqual(ignored(events), [.outsideWindows])
        events = run(&r, [(3000, true), (4000, false)], until: 5000, windowOpen: true)
        XCTAssertEqual(fired(events), [t(3000)], "the first activation in a window fires")
    }

    /// A change that began before the clip's end is decided first: it keeps the clip going.
    func testAnActivationSettlingAtTheEndKeepsTheClip() {
        var r = rules(.clip(after: .seconds(10)), holdOffMs: 0)
        var events = run(&r, [(0, true), (1000, false)], until: 10_990)
        XCTAssertEqual(fired(events), [t(0)])
        events = r.feed(active: true, at: t(10_995), windowOpen: true)
        // Due at 11 000, but the burst from 10 995 settles at 11 015: the end waits for it.
        XCTAssertEqual(r.nextDeadline, t(11_015))
        events += r.advance(to: t(11_015), windowOpen: true)
        XCTAssertEqual(events, [.changed(active: true, at: t(10_995)), .extended(at: t(10_995))])
        XCTAssertNil(r.nextDeadline, "active: no end yet")
    }

    /// A clip that ended by itself (the maximum duration) is not started again while the
    /// input stays active; the next activation past the hold-off starts the next.
    func testAClipEndedByItselfWaitsForTheNextActivation() {
        var r = rules(.clip(after: .seconds(5)), holdOffMs: 2000)
        var events = run(&r, [(0, true)], until: 60_000)
        XCTAssertEqual(fired(events), [t(0)])
        r.clipEnded()
        events = run(&r, [(61_000, false)], until: 70_000)
        XCTAssertFalse(events.contains { if case .clipEnds = $0 { return true } else { return false } })
        events = run(&r, [(71_000, true)], until: 72_000)
        XCTAssertEqual(fired(events), [t(71_000)])
    }

    func testSettingsFromTheConfiguration() {
        let s = TriggerRules.Settings(.init(name: "door", line: "GPIO24", holdOffSeconds: 1.5, action: .clip,
                                            clipAfterSeconds: 7))
        XCTAssertEqual(s.action, .clip(after: .seconds(7)))
        XCTAssertEqual(s.holdOff, .milliseconds(1500))
        XCTAssertEqual(s.stability, .milliseconds(20))
        XCTAssertEqual(TriggerRules.Settings(.init(name: "b", line: "5", action: .burst, burstCount: 4)).action,
                       .burst(count: 4))
    }
}
