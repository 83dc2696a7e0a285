// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
import ShutterSim
@testable import ShutterService

/// The whole service in this process on the simulated board, every device and
/// timer on a ManualClock the test moves: the button edges, the frames, a
/// still's mode switch, the gesture and capture timers. Only the real work
/// (JPEG, fsync, the encoder) takes real time, and each step waits for it.
final class ManualClockServiceTests: XCTestCase {
    private typealias Rig = InProcessRig

    /// Small frames and stills, no shutdown gesture: the rig's service as these tests had it.
    private func rig(clock: ManualClock? = nil, button: (any ButtonInput)? = nil,
                     _ edit: @escaping (inout ShutterConfig) -> Void = { _ in }) async throws -> Rig {
        try await InProcessRig.start(self, clock: clock, button: button, edit: { c in
            c.video.width = 320
            c.video.height = 240
            c.still.width = 640
            c.still.height = 480
            c.video.preset = "ultrafast"
            c.shutdown.taps = 0
            edit(&c)
        })
    }

    private func advance(_ r: Rig, until what: String, limit: Duration = .seconds(60),
                         _ done: () async -> Bool) async throws {
        try await r.advance(until: what, limit: limit, done)
    }

    private func advance(_ r: Rig, by d: Duration) async {
        await r.advance(by: d)
    }

    private final class Replies: @unchecked Sendable {
        // Unchecked: the lock guards `replies`.
        private let lock = NSLock()
        private var replies: [ControlReply] = []
        func add(_ r: ControlReply) { lock.lock(); replies.append(r); lock.unlock() }
        var all: [ControlReply] { lock.lock(); defer { lock.unlock() }; return replies }
    }

    private func stop(_ r: Rig) async throws {
        let code = try await r.stop()
        XCTAssertEqual(code, 0)
    }

    func testAButtonTapIsOnePhotoAndTheStillCostsTheVideoItsModeSwitch() async throws {
        let r = try await rig {
            $0.sim.modeSwitchMs = 300
            $0.still.moment = .focused  // the full-resolution still and its switch
        }
        r.board.button.press()
        await advance(r, by: .milliseconds(200))
        r.board.button.release()
        try await advance(r, until: "the photo") { r.files("JPG").count == 1 }
        try await advance(r, until: "idle") { await r.service.status().state == "idle" }
        XCTAssertEqual(r.board.camera.modeSwitches, 1)
        let gap = try XCTUnwrap(r.board.camera.lastVideoGap)
        // sim.modeSwitchMs, plus at most a frame period from the last frame to the still.
        XCTAssertGreaterThanOrEqual(gap, .milliseconds(300), "video stops for the configured mode switch")
        XCTAssertLessThan(gap, .milliseconds(300 + 34), "and no longer")
        XCTAssertEqual(r.files("MP4"), [], "a tap leaves no clip")
        let s = await r.service.status()
        XCTAssertEqual(s.counters.photos, 1)
        XCTAssertEqual(s.counters.refusedPresses, 0)
        try await stop(r)
    }

    func testRequestsDuringTheModeSwitchWaitOneAndRefuseTheRestNamingTheirOwnFiles() async throws {
        let r = try await rig { $0.still.moment = .focused }
        let replies = Replies()
        let first = Task { replies.add(await r.service.handle(ControlRequest(cmd: "tap"))) }
        try await advance(r, until: "the switch") { r.board.camera.isSwitchingModes }
        // During the switch: the button and two remote requests at the same instant.
        r.board.button.press()
        let more = (0..<2).map { _ in Task { replies.add(await r.service.handle(ControlRequest(cmd: "photo"))) } }
        await advance(r, by: .milliseconds(100))
        r.board.button.release()
        try await advance(r, until: "three replies") { replies.all.count == 3 }
        _ = (first, more)
        try await advance(r, until: "idle") { await r.service.status().state == "idle" && r.files("JPG").count >= 2 }
        let all = replies.all
        let named = all.compactMap(\.files).flatMap { $0 }
        XCTAssertEqual(Set(named).count, named.count, "no file named twice: \(all)")
        let refused = all.filter { !$0.ok }
        XCTAssertTrue(refused.allSatisfy { $0.busy == true && ($0.error ?? "").hasPrefix("busy: ") }, "\(all)")
        // One still was being taken; one more request (the button or a remote one) waited; the rest refused.
        XCTAssertEqual(r.files("JPG").count, 2)
        XCTAssertEqual(refused.count + (named.count - 1), 2, "\(all)")
        let s = await r.service.status()
        XCTAssertEqual(s.counters.photos, 2)
        XCTAssertEqual(s.counters.refusedPresses, 2, "the button's press or a request was refused, each counted")
        try await stop(r)
    }

    func testARemoteHoldIsAClipOfExactlyThatLengthOnTheCameraClock() async throws {
        let r = try await rig { $0.audio.enabled = false }
        let replies = Replies()
        _ = Task { replies.add(await r.service.handle(ControlRequest(cmd: "hold", seconds: 2))) }
        try await advance(r, until: "the clip") { !replies.all.isEmpty }
        let reply = try XCTUnwrap(replies.all.first)
        XCTAssertTrue(reply.ok, "\(reply)")
        let path = try XCTUnwrap(reply.files?.first)
        XCTAssertEqual(r.files("MP4"), [path])
        XCTAssertLessThanOrEqual(try XCTUnwrap(reply.clipStartOffsetMs), 0, "the clip starts at the request")
        XCTAssertEqual(try probe(path).format, 2.0, accuracy: 0.1)
        try await stop(r)
    }

    func testStoppingDuringARecordingFinishesTheClipThenExits() async throws {
        let r = try await rig { $0.audio.enabled = false }
        r.board.button.press()
        try await advance(r, until: "recording") { await r.service.status().state == "recording" }
        await advance(r, by: .milliseconds(500))
        r.service.stop()
        let code = try await r.exitCode(limit: .seconds(30))
        XCTAssertEqual(code, 0)
        let clip = try XCTUnwrap(r.files("MP4").first)
        XCTAssertGreaterThan(try probe(clip).format, 1.0, "the clip from the press to the stop is kept")
        let (ok, err) = try decodesCleanly(clip)
        XCTAssertTrue(ok, err)
    }

    /// A button whose edges sit in a kernel queue until its reader gets the CPU, as on
    /// a loaded machine; `catchUp()` reads the queue first, like `GPIOButton`'s.
    private final class LateButton: ButtonInput, @unchecked Sendable {
        // Unchecked: the lock guards every field.
        private let lock = NSLock()
        private let clock: ManualClock
        private var queued: [ButtonEdge] = []
        private var sink: ButtonSink?
        private var asked = 0
        /// Whether it says when nothing is left unread (GPIOButton's poll), or cannot tell.
        private let tells: Bool
        init(clock: ManualClock, tells: Bool = false) {
            self.clock = clock
            self.tells = tells
        }
        /// `catchUp()` calls so far.
        var catchUps: Int { lock.lock(); defer { lock.unlock() }; return asked }
        var allEdgesDelivered: Bool { lock.lock(); defer { lock.unlock() }; return tells && queued.isEmpty }

        func deliver(to sink: @escaping ButtonSink) {
            lock.lock(); self.sink = sink; lock.unlock()
        }
        /// An edge the kernel timestamped `msAgo` before now, not yet read.
        func edge(_ pressed: Bool, msAgo: Int64 = 0) {
            lock.lock(); queued.append(ButtonEdge(pressed: pressed, time: clock.now() - .milliseconds(msAgo))); lock.unlock()
        }
        /// The reader wakes and reads `n` queued edges.
        func deliver(_ n: Int = .max) {
            lock.lock(); defer { lock.unlock() }
            for e in queued.prefix(n) { _ = sink?(.edge(e)) }
            queued.removeFirst(min(n, queued.count))
        }
        func catchUp() {
            let now = clock.now()
            deliver()
            lock.lock(); defer { lock.unlock() }
            asked += 1
            _ = sink?(.caughtUp(now))
        }
    }

    /// A bouncing press whose edges reach the service after the stability window they
    /// belong to (the emulator under load did this): still one press, one photo. Decided
    /// on the clock alone, the late release bounce made a tap, then a second press.
    func testEdgesThatArriveLateStillMakeOnePressWhenTheyBounce() async throws {
        let clock = ManualClock(start: .milliseconds(1_000_000))
        let button = LateButton(clock: clock)
        let r = try await rig(clock: clock, button: button) { $0.button.stabilityMs = 20 }
        button.edge(true); button.deliver()
        await advance(r, by: .milliseconds(30))
        let state = await r.service.status().state
        XCTAssertEqual(state, "pressed", "the press counts once steady")
        await advance(r, by: .milliseconds(300))
        // The release bounces: up, down 8 ms later, up 2 ms after that; the reader is late.
        button.edge(false, msAgo: 10); button.edge(true, msAgo: 2); button.edge(false, msAgo: 0)
        // The reader reads one edge at a time, each after its stability window passed.
        for _ in 0..<2 {
            await advance(r, by: .milliseconds(25))
            button.deliver(1)
        }
        await advance(r, by: .milliseconds(25))
        button.deliver()
        try await advance(r, until: "the photo") { r.files("JPG").count >= 1 }
        try await advance(r, until: "idle") { await r.service.status().state == "idle" }
        await advance(r, by: .seconds(3))
        XCTAssertEqual(r.files("JPG").count, 1, "one bouncing press, one photo")
        XCTAssertEqual(r.files("MP4"), [])
        let photos = await r.service.status().counters.photos
        XCTAssertEqual(photos, 1)
        try await stop(r)
    }

    /// Issue 40: a button that can tell nothing is left unread (GPIOButton polls its line)
    /// has its deadlines decided at once, with no catch-up round trip; one that cannot tell
    /// is asked at every deadline. The same tap, the same photo, either way.
    func testADueDeadlineIsDecidedAtOnceWhenTheButtonCanTellEveryEdgeIsIn() async throws {
        for tells in [true, false] {
            let clock = ManualClock(start: .milliseconds(1_000_000))
            let button = LateButton(clock: clock, tells: tells)
            let r = try await rig(clock: clock, button: button) { $0.button.stabilityMs = 20 }
            button.edge(true); button.deliver()
            await advance(r, by: .milliseconds(150))
            button.edge(false); button.deliver()
            try await advance(r, until: "the photo") { r.files("JPG").count >= 1 }
            try await advance(r, until: "idle") { await r.service.status().state == "idle" }
            print("tap with a button that \(tells ? "tells" : "cannot tell"): \(button.catchUps) catch-up round trips")
            if tells {
                XCTAssertEqual(button.catchUps, 0, "every deadline decided at once")
            } else {
                XCTAssertGreaterThanOrEqual(button.catchUps, 2, "the press's and the release's steadiness, each asked")
            }
            XCTAssertEqual(r.files("JPG").count, 1)
            try await stop(r)
        }
    }
}
