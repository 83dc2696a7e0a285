// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import Synchronization
import XCTest
import ShutterControl
import ShutterCore
@testable import ShutterService

/// Interval capture on the whole service in process, on the manual clock, with a wall clock
/// that moves with it: photos at every slot through the tap's path, a tap and a clip
/// meanwhile, pause and resume, the count and the last slot across a restart, the
/// monotonic clock when the wall clock is not trusted. Verdicts on what the service
/// reports (status.interval, its events, the card), never on how fast this machine ran.
final class IntervalCaptureTests: XCTestCase {
    /// A trusted wall clock on the test's manual clock: `start` at the clock's `at`, UTC+1.
    struct FollowingWallClock: WallClock {
        let clock: ManualClock
        let start: WallTime
        let at: MonotonicTime
        init(clock: ManualClock, localTime seconds: Int64, trusted: Bool = true) {
            self.clock = clock
            at = clock.now()
            start = WallTime(secondsSinceEpoch: seconds - 3600, nanoseconds: 250_000_000, utcOffsetSeconds: 3600,
                             isTrusted: trusted)
        }
        func now() -> WallTime { start.adding(clock.now() - at) }
    }

    final class Seen: Sendable {
        private let events = Mutex([LiveEvent]())
        func add(_ e: LiveEvent) { events.withLock { $0.append(e) } }
        var files: [JSONObject] { events.withLock { $0.filter { $0.type == "file" }.map(\.data) } }
    }

    /// 2026-12-05 12:00:00 local time, as local seconds since the epoch.
    static let noon: Int64 = 1_796_428_800 + 12 * 3600

    func config(every: Int, count: Int = 0, windows: String = "") -> String {
        """
        {"video": {"fps": 10}, "interval": {"enabled": true, "everySeconds": \(every), "count": \(count), \
        "windows": "\(windows)"}}
        """
    }

    func interval(_ r: InProcessRig, file: StaticString = #filePath, line: UInt = #line) async throws -> IntervalReport {
        let status = await r.status()
        return try XCTUnwrap(status.interval, "status.interval with interval.enabled", file: file, line: line)
    }

    func testPhotosArriveAtEverySlotATapStillWorksAndAClipSkipsSlots() async throws {
        let clock = ManualClock(start: .milliseconds(1_000_000))
        let r = try await InProcessRig.start(self, json: config(every: 2), clock: clock,
                                             wallClock: FollowingWallClock(clock: clock, localTime: Self.noon))
        let seen = Seen()
        let watch = r.service.events.watch { seen.add($0) }
        defer { r.service.events.stopWatching(watch) }
        // From the first slot's photo on (a slot passed just before the start may be taken late).
        try await r.advance(until: "the first slot", limit: .seconds(5)) { (try? await self.interval(r).taken) == 1 }
        let before = try await interval(r)
        XCTAssertEqual(before.clock, "wall", "\(before)")
        XCTAssertNil(before.waiting, "\(before)")
        XCTAssertNotNil(before.nextSlot, "the next slot in local time: \(before)")
        XCTAssertTrue(before.nextSlot?.hasSuffix("+01:00") == true, "\(before)")
        let first = try XCTUnwrap(before.nextInSeconds)
        XCTAssertTrue(first > 0 && first <= 2, "\(before)")

        // 10 s of the clock: exactly the 5 slots in it, each a photo.
        await r.advance(by: .seconds(10))
        let after = try await interval(r)
        XCTAssertEqual(after.taken - before.taken, 5, "\(after)\n\(r.log.text.suffix(2000))")
        XCTAssertEqual(after.skipped, 0, "\(after)")
        let last = try XCTUnwrap(after.lastSlotSeconds)
        XCTAssertEqual(last % 2, 0, "slots on the grid: \(after)")
        XCTAssertEqual(after.lastSlot?.hasPrefix("2026-12-05T12:00:"), true, "local time: \(after)")
        // Every interval photo is on the card, and its event says where it came from.
        try await r.advance(until: "the last slot's photo saved") { r.files("JPG").count == after.taken }
        XCTAssertEqual(seen.files.filter { $0["source"] == .string("interval") }.count, after.taken)

        // A tap between slots: its own photo, its event without a source.
        let tapped = try await r.photo()
        XCTAssertEqual(seen.files.last(where: { $0["path"] == .string(tapped) })?["source"], nil)

        // A clip of 5 s: the slots while it records are skipped and counted, not queued.
        let ready = try await interval(r)
        let hold = r.send(ControlRequest(cmd: "hold", seconds: 5))
        try await r.wait(for: "recording")
        let recording = try await interval(r)
        await r.advance(by: .seconds(4))
        let during = try await interval(r)
        let state = await r.status().state
        XCTAssertEqual(state, "recording")
        XCTAssertEqual(during.taken, recording.taken, "no slot's photo asked for while the clip records: \(during)")
        XCTAssertEqual(during.skipped - recording.skipped, 2, "the 2 slots in 4 s of the clip: \(during)")
        try await r.advance(until: "the hold's answer") { hold.reply != nil }
        XCTAssertTrue(hold.reply?.ok == true, "\(String(describing: hold.reply))")
        await r.advance(by: .seconds(4))
        let end = try await interval(r)
        let slots = Int((try XCTUnwrap(end.lastSlotSeconds) - (ready.lastSlotSeconds ?? 0)) / 2)
        XCTAssertGreaterThanOrEqual(end.skipped - ready.skipped, 2, "slots while the clip recorded: \(end)")
        XCTAssertEqual((end.taken - ready.taken) + (end.skipped - ready.skipped), slots,
                       "every slot taken or skipped, once: \(ready) → \(end)")
        XCTAssertGreaterThan(end.taken, ready.taken, "slots after the clip are taken again: \(end)")
        // Skipped before asking, not asked and refused: no press of anyone's counts as refused.
        let refused = await r.status().counters.refusedPresses
        XCTAssertEqual(refused, 0, "an interval slot during a clip is skipped, not a refused request")
        try await r.advance(until: "every photo saved") { r.files("JPG").count == end.taken + 1 }
        XCTAssertEqual(r.files("MP4").count, 1)
    }

    func testPauseResumeAndTheCountAcrossARestartWithoutTakingASlotTwice() async throws {
        let clock = ManualClock(start: .milliseconds(1_000_000))
        let wall = FollowingWallClock(clock: clock, localTime: Self.noon)
        let json = config(every: 30, count: 3)
        let r = try await InProcessRig.start(self, json: json, clock: clock, wallClock: wall)
        try await r.advance(until: "the first slot's photo", limit: .seconds(40)) {
            (try? await self.interval(r).taken) == 1 && r.files("JPG").count == 1
        }
        // Paused: slots pass, nothing is taken or counted.
        var reply = try await r.ask(ControlRequest(cmd: "interval", action: "pause"))
        XCTAssertTrue(reply.ok, "\(reply)")
        XCTAssertEqual(reply.interval?.paused, true)
        XCTAssertNotNil(reply.interval?.waiting)
        await r.advance(by: .seconds(65))
        var now = try await interval(r)
        XCTAssertEqual(now.taken, 1, "\(now)")
        XCTAssertEqual(now.skipped, 0, "\(now)")
        XCTAssertNil(now.nextSlot, "paused: no next slot: \(now)")
        reply = try await r.ask(ControlRequest(cmd: "interval", action: "resume"))
        XCTAssertEqual(reply.interval?.paused, false, "\(reply)")
        try await r.advance(until: "the slot after the resume", limit: .seconds(40)) {
            (try? await self.interval(r).taken) == 2 && r.files("JPG").count == 2
        }
        let taken = try await interval(r)
        let slot = try XCTUnwrap(taken.lastSlotSeconds)
        let kept = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: r.root + "/.interval/state.json")))
            as? [String: Any]
        XCTAssertEqual(kept?["taken"] as? Int, 2, "kept on the card: \(String(describing: kept))")
        XCTAssertEqual((kept?["lastSlot"] as? NSNumber)?.int64Value, slot)

        // A restart within the slot just taken: it is not taken again.
        let code = try await r.stop()
        XCTAssertEqual(code, 0)
        let again = try await InProcessRig.start(self, json: json, dir: r.dir, clock: clock, wallClock: wall)
        now = try await interval(again)
        XCTAssertEqual(now.taken, 2, "the count goes on: \(now)")
        XCTAssertEqual(now.lastSlotSeconds, slot)
        XCTAssertLessThan(Int64(try XCTUnwrap(now.nextInSeconds)), 30, "\(now)")
        let untilNext = Int64(now.nextInSeconds!)
        if untilNext > 1 { await again.advance(by: .seconds(untilNext - 1)) }
        now = try await interval(again)
        XCTAssertEqual(now.taken, 2, "the slot taken before the restart is not taken again: \(now)\n\(again.log.text.suffix(2000))")
        XCTAssertEqual(again.files("JPG").count, 2)
        // The count (3) is reached across the restart, and then nothing more.
        await again.advance(by: .seconds(95))
        now = try await interval(again)
        XCTAssertEqual(now.taken, 3, "\(now)")
        XCTAssertTrue(now.waiting?.contains("count") == true, "\(now)")
        XCTAssertNil(now.nextSlot)
        XCTAssertEqual(again.files("JPG").count, 3)
        // reset: the count starts again.
        reply = try await again.ask(ControlRequest(cmd: "interval", action: "reset"))
        XCTAssertEqual(reply.interval?.taken, 0, "\(reply)")
        XCTAssertNil(reply.interval?.waiting, "\(reply)")
    }

    func testWithoutATrustedClockTheMonotonicClockAndWindowsWait() async throws {
        let clock = ManualClock(start: .milliseconds(1_000_000))
        let untrusted = FollowingWallClock(clock: clock, localTime: Self.noon, trusted: false)
        let r = try await InProcessRig.start(self, json: config(every: 2), clock: clock, wallClock: untrusted)
        try await r.advance(until: "the first slot", limit: .seconds(5)) { (try? await self.interval(r).taken) == 1 }
        let before = try await interval(r)
        XCTAssertEqual(before.clock, "monotonic", "\(before)")
        XCTAssertNil(before.nextSlot, "no local time without a trusted clock: \(before)")
        await r.advance(by: .seconds(6))
        let after = try await interval(r)
        XCTAssertEqual(after.taken - before.taken, 3, "\(after)")
        XCTAssertEqual(try XCTUnwrap(after.lastSlotSeconds) % 2, 0, "on the grid of seconds since boot: \(after)")
        let code = try await r.stop()
        XCTAssertEqual(code, 0)

        // Windows without the time of day: nothing is taken, and status says why.
        let w = try await InProcessRig.start(self, json: config(every: 2, windows: "22:00-06:00"), clock: clock,
                                             wallClock: untrusted)
        await w.advance(by: .seconds(6))
        let waiting = try await interval(w)
        XCTAssertTrue(waiting.waiting?.contains("trusted") == true, "\(waiting)")
        XCTAssertEqual(waiting.taken, 0, "\(waiting)")
        XCTAssertEqual(w.files("JPG").count, 0)
    }

    func testTheCommandWhenIntervalCaptureIsOff() async throws {
        let r = try await InProcessRig.start(self)
        let status = await r.status()
        XCTAssertNil(status.interval)
        let reply = try await r.ask(ControlRequest(cmd: "interval", action: "status"))
        XCTAssertFalse(reply.ok)
        XCTAssertTrue(reply.error?.contains("interval.enabled") == true, "\(reply)")
        let bad = r.send(ControlRequest(cmd: "interval", action: "later"))
        XCTAssertTrue(bad.reply?.error?.contains("status, pause, resume or reset") == true, "\(String(describing: bad.reply))")
    }
}
