// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import Synchronization
import XCTest
import ShutterControl
import ShutterCore
import ShutterSim
@testable import ShutterService

/// Trigger inputs on the whole service in process, on the manual clock, driving the
/// simulated board's trigger lines: a PIR's pulse train, a door held open, a bouncing
/// contact, the button during a trigger's clip, the `sim` command. Verdicts on what the
/// service reports (status.triggers, its events, the card, ffprobe of the clip), never on
/// how fast this machine ran.
final class TriggerCaptureTests: XCTestCase {
    final class Seen: Sendable {
        private let events = Mutex([LiveEvent]())
        func add(_ e: LiveEvent) { events.withLock { $0.append(e) } }
        var files: [JSONObject] { events.withLock { $0.filter { $0.type == "file" }.map(\.data) } }
        var triggers: [JSONObject] { events.withLock { $0.filter { $0.type == "trigger" }.map(\.data) } }
    }

    /// Small frames: what is checked is which captures happen, not their pixels.
    func config(_ inputs: String) -> String {
        """
        {"video": {"fps": 10, "width": 640, "height": 360}, "still": {"width": 1280, "height": 720},
         "audio": {"enabled": false}, "triggers": {"inputs": [\(inputs)]}}
        """
    }

    func line(_ r: InProcessRig, _ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> SimButton {
        try XCTUnwrap(r.service.ctx.roles.simTrigger(name), "the sim board's line for \(name)", file: file, line: line)
    }

    func report(_ r: InProcessRig, _ name: String, file: StaticString = #filePath, line: UInt = #line) async throws -> TriggerReport {
        let s = await r.status()
        return try XCTUnwrap(s.triggers?.first { $0.name == name }, "status.triggers[\(name)]", file: file, line: line)
    }

    func watch(_ r: InProcessRig) -> Seen {
        let seen = Seen()
        let id = r.service.events.watch { seen.add($0) }
        addTeardownBlock { r.service.events.stopWatching(id) }
        return seen
    }

    /// A PIR: high 1 s every 3 s. The retriggers within its 10 s hold-off make no more
    /// photos; the pulse after it makes the second. Each photo's event names the trigger.
    func testAPIRPulseTrainWithinTheHoldOffMakesOnePhoto() async throws {
        let r = try await InProcessRig.start(self, json: config(#"{"name": "pir", "line": "GPIO23", "holdOffSeconds": 10}"#))
        let seen = watch(r)
        let pir = try line(r, "pir")
        for _ in 0..<4 {
            pir.set(pressed: true)
            await r.advance(by: .seconds(1))
            pir.set(pressed: false)
            await r.advance(by: .seconds(2))
        }
        try await r.advance(until: "the trigger's photo saved") { (try? await self.report(r, "pir").photos) == 1 }
        var rep = try await report(r, "pir")
        XCTAssertEqual(rep.fired, 1, "\(rep)")
        XCTAssertEqual(rep.ignored, 3, "the 3 retriggers within the hold-off: \(rep)")
        XCTAssertEqual(r.files("JPG").count, 1)
        XCTAssertEqual(seen.triggers.count, 8, "each pulse's rise and fall: \(seen.triggers)")
        // 12 s after the first rise: past the hold-off, the next photo.
        pir.set(pressed: true)
        await r.advance(by: .seconds(1))
        pir.set(pressed: false)
        try await r.advance(until: "the second photo") { (try? await self.report(r, "pir").photos) == 2 }
        rep = try await report(r, "pir")
        XCTAssertEqual(rep.fired, 2, "\(rep)")
        XCTAssertEqual(rep.skipped, 0, "\(rep)")
        XCTAssertEqual(r.files("JPG").count, 2)
        let files = seen.files
        XCTAssertEqual(files.count, 2, "\(files)")
        for f in files {
            XCTAssertEqual(f["source"], .string("trigger"), "\(f)")
            XCTAssertEqual(f["trigger"], .string("pir"), "\(f)")
        }
        let refused = await r.status().counters.refusedPresses
        XCTAssertEqual(refused, 0)
    }

    /// A door held open 20 s with a clip trigger of 5 s after: one clip, recording all the
    /// while the door is open and 5 s more, then saved; its event names the trigger.
    func testADoorHeldOpenMakesOneClipWhileOpenPlusItsSeconds() async throws {
        let r = try await InProcessRig.start(self, json: config(
            #"{"name": "door", "line": "GPIO24", "action": "clip", "clipAfterSeconds": 5, "holdOffSeconds": 1}"#))
        let seen = watch(r)
        let door = try line(r, "door")
        door.set(pressed: true)
        try await r.wait(for: "recording", limit: .seconds(2))
        await r.advance(by: .seconds(20))
        door.set(pressed: false)
        await r.advance(by: .milliseconds(4800))
        let state = await r.status().state
        XCTAssertEqual(state, "recording", "closed 4.8 s ago, 5 s after: still recording")
        try await r.advance(until: "the clip saved", limit: .seconds(30)) { (try? await self.report(r, "door").clips) == 1 }
        let rep = try await report(r, "door")
        XCTAssertEqual(rep.fired, 1, "\(rep)")
        XCTAssertEqual(rep.active, false)
        let clips = r.files("MP4")
        XCTAssertEqual(clips.count, 1, "\(clips)")
        XCTAssertEqual(r.files("JPG").count, 0)
        let duration = try probe(clips[0]).format
        XCTAssertEqual(duration, 25, accuracy: 0.6, "open 20 s + 5 s: \(duration) s")
        let file = try XCTUnwrap(seen.files.first)
        XCTAssertEqual(file["trigger"], .string("door"), "\(file)")
        XCTAssertEqual(file["kind"], .string("video"), "\(file)")
    }

    /// A reed contact that bounces as it closes and as it opens, with a burst of 3: one
    /// activation, 3 photos, one after the other; the opening's bounces make nothing.
    func testABouncingContactMakesOneBurst() async throws {
        let r = try await InProcessRig.start(self, json: config(
            #"{"name": "reed", "line": "GPIO25", "action": "burst", "burstCount": 3, "holdOffSeconds": 5}"#))
        let seen = watch(r)
        let reed = try line(r, "reed")
        for level in [true, false, true, false, true] {
            reed.set(pressed: level)
            await r.advance(by: .milliseconds(2))
        }
        await r.advance(by: .seconds(3))
        for level in [false, true, false, true, false] {
            reed.set(pressed: level)
            await r.advance(by: .milliseconds(2))
        }
        try await r.advance(until: "the burst saved") { (try? await self.report(r, "reed").photos) == 3 }
        await r.advance(by: .seconds(3))
        let rep = try await report(r, "reed")
        XCTAssertEqual(rep.fired, 1, "\(rep)")
        XCTAssertEqual(rep.ignored, 0, "the bounces were no activations: \(rep)")
        XCTAssertEqual(rep.photos, 3, "\(rep)")
        XCTAssertEqual(r.files("JPG").count, 3)
        XCTAssertEqual(seen.files.filter { $0["trigger"] == .string("reed") }.count, 3)
        XCTAssertEqual(seen.triggers.count, 2, "one rise, one fall: \(seen.triggers)")
    }

    /// The button keeps priority. A tap during a trigger's clip is a still from the video
    /// (the clip goes on); a hold during it keeps the clip going past the trigger's own end
    /// until the release.
    func testTheButtonDuringATriggersClip() async throws {
        let r = try await InProcessRig.start(self, json: config(
            #"{"name": "door", "line": "GPIO24", "action": "clip", "clipAfterSeconds": 5, "holdOffSeconds": 1}"#))
        let seen = watch(r)
        let door = try line(r, "door")
        let opened = r.clock.now()
        door.set(pressed: true)
        try await r.wait(for: "recording", limit: .seconds(2))
        let tapped = try await r.photo()
        var state = await r.status().state
        XCTAssertEqual(state, "recording", "the tap did not stop the trigger's clip")
        door.set(pressed: false)
        let closed = r.clock.now()
        await r.advance(by: .seconds(1))
        let press = r.send(ControlRequest(cmd: "press"))
        await r.advance(by: .seconds(9))
        state = await r.status().state
        XCTAssertEqual(state, "recording", "closed \(r.clock.now() - closed) ago (5 s after), the button held: still recording")
        let released = r.clock.now()
        let release = r.send(ControlRequest(cmd: "release"))
        try await r.advance(until: "the clip saved", limit: .seconds(30)) { (try? await self.report(r, "door").clips) == 1 }
        _ = press
        try await r.advance(until: "the release's answer") { release.reply != nil }
        let clips = r.files("MP4")
        XCTAssertEqual(clips.count, 1, "\(clips)")
        let duration = try probe(clips[0]).format
        let seconds = { (d: Duration) in Double(d.nanoseconds) / 1e9 }
        let untilRelease = seconds(released - opened), untilTriggersEnd = seconds(closed - opened) + 5
        XCTAssertEqual(duration, untilRelease, accuracy: 0.3,
                       "held past the trigger's end (\(untilTriggersEnd) s) until the release (\(untilRelease) s): \(duration) s")
        let photo = try XCTUnwrap(seen.files.first { $0["path"] == .string(tapped) })
        XCTAssertNil(photo["trigger"], "the tap's photo is the button's: \(photo)")
        XCTAssertEqual(seen.files.first { $0["kind"] == .string("video") }?["trigger"], .string("door"))
    }

    /// The button keeps the machine's one queued place: a trigger firing while a photo is
    /// taken waits for the camera instead of queueing, so a tap right after it is queued and
    /// served, not refused; the trigger's photo follows. (`focused` photos take the simulated
    /// mode switch's 500 ms of the clock, so the camera is busy while the clock moves.)
    func testATriggerNeverTakesTheQueuedPlaceOfTheButton() async throws {
        let json = config(#"{"name": "pir", "line": "GPIO23"}"#)
            .replacingOccurrences(of: #""still": {"#, with: #""still": {"moment": "focused", "#)
        let r = try await InProcessRig.start(self, json: json)
        let seen = watch(r)
        let pir = try line(r, "pir")
        let first = r.send(ControlRequest(cmd: "tap"))
        await r.advance(by: .milliseconds(10))
        var state = await r.status().state
        XCTAssertEqual(state, "taking-photo")
        pir.set(pressed: true)
        await r.advance(by: .milliseconds(50))
        state = await r.status().state
        XCTAssertEqual(state, "taking-photo", "the first photo still being taken")
        let fired = try await report(r, "pir").fired
        XCTAssertEqual(fired, 1)
        let second = r.send(ControlRequest(cmd: "tap"))
        pir.set(pressed: false)
        try await r.advance(until: "both taps answered") { first.reply != nil && second.reply != nil }
        XCTAssertTrue(first.reply?.ok == true, "\(String(describing: first.reply))")
        XCTAssertTrue(second.reply?.ok == true, "the second tap queued and served: \(String(describing: second.reply))")
        try await r.advance(until: "the trigger's photo") { (try? await self.report(r, "pir").photos) == 1 }
        let refused = await r.status().counters.refusedPresses
        XCTAssertEqual(refused, 0)
        XCTAssertEqual(r.files("JPG").count, 3)
        // In this order: the two taps, then the trigger's.
        XCTAssertEqual(seen.files.map { $0["trigger"] }, [nil, nil, .string("pir")], "\(seen.files)")
    }

    /// `sim --trigger NAME --active true|false` moves the line; an unknown name is refused
    /// with the names there are.
    func testTheSimCommandMovesATriggersLine() async throws {
        let r = try await InProcessRig.start(self, json: config(#"{"name": "pir", "line": "GPIO23"}"#))
        var reply = try await r.ask(ControlRequest.simTrigger("nope", active: true))
        XCTAssertFalse(reply.ok)
        XCTAssertTrue(reply.error?.contains("\"pir\"") == true, "\(reply)")
        reply = try await r.ask(ControlRequest.simTrigger("pir", active: true))
        XCTAssertTrue(reply.ok, "\(reply)")
        await r.advance(by: .milliseconds(500))
        let active = try await report(r, "pir").active
        XCTAssertEqual(active, true)
        reply = try await r.ask(ControlRequest.simTrigger("pir", active: false))
        XCTAssertTrue(reply.ok, "\(reply)")
        try await r.advance(until: "the photo") { (try? await self.report(r, "pir").photos) == 1 }
        XCTAssertEqual(r.files("JPG").count, 1)
    }

    /// Daily windows read from a trusted wall clock: at noon, "11:00-13:00" fires and
    /// "22:00-06:00" does not.
    func testWindowsFromTheWallClock() async throws {
        let clock = ManualClock(start: .milliseconds(1_000_000))
        let wall = IntervalCaptureTests.FollowingWallClock(clock: clock, localTime: IntervalCaptureTests.noon)
        let r = try await InProcessRig.start(self, json: config("""
            {"name": "day", "line": "GPIO23", "windows": "11:00-13:00"},
            {"name": "night", "line": "GPIO24", "windows": "22:00-06:00"}
            """), clock: clock, wallClock: wall)
        for name in ["day", "night"] {
            let l = try line(r, name)
            l.set(pressed: true)
            await r.advance(by: .seconds(1))
            l.set(pressed: false)
        }
        try await r.advance(until: "the day trigger's photo") { (try? await self.report(r, "day").photos) == 1 }
        await r.advance(by: .seconds(2))
        let night = try await report(r, "night")
        XCTAssertEqual(night.fired, 0, "\(night)")
        XCTAssertEqual(night.ignored, 1, "\(night)")
        XCTAssertEqual(night.windowOpen, false)
        let day = try await report(r, "day")
        XCTAssertEqual(day.windowOpen, true)
        XCTAssertEqual(r.files("JPG").count, 1)
    }
}

extension ControlRequest {
    static func simTrigger(_ name: String, active: Bool) -> ControlRequest {
        var r = ControlRequest(cmd: "sim")
        r.trigger = name
        r.active = active
        return r
    }
}
