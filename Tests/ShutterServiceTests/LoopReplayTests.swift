// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
import ShutterSim
import ShutterStorage
@testable import ShutterService

/// The loop itself, fed a recorded list of events by hand and read out: the
/// capture machine's actions (the loop's `reportAction`), the jobs it
/// decided (taken, never run) and the replies it sent. No thread, no task, no
/// timer: the clock is a ManualClock moved between events, the camera's frames
/// are made here, and a job's result is an event the test writes.
final class LoopReplayTests: XCTestCase {
    /// Everything the loop put out, in order.
    final class Trace: @unchecked Sendable {
        // Unchecked: the lock guards both arrays (the loop calls in from the test's own thread only).
        private let lock = NSLock()
        private var actionList: [CaptureAction] = []
        private var replyList: [(String, ControlReply)] = []
        func add(_ a: CaptureAction) { lock.lock(); actionList.append(a); lock.unlock() }
        func add(_ name: String, _ r: ControlReply) { lock.lock(); replyList.append((name, r)); lock.unlock() }
        var actions: [CaptureAction] { lock.lock(); defer { lock.unlock() }; return actionList }
        var replies: [(String, ControlReply)] { lock.lock(); defer { lock.unlock() }; return replyList }
        /// The actions since the last call.
        private var read = 0
        func newActions() -> [CaptureAction] {
            lock.lock(); defer { lock.unlock() }
            defer { read = actionList.count }
            return Array(actionList[read...])
        }
    }

    private struct Replay {
        let loop: ServiceLoop
        let clock: ManualClock
        let trace: Trace
        let config: ShutterConfig
        let camera: SimCamera
        let buffer = OwnedFrameBuffer(capacity: Frame.i420ByteCount(width: 64, height: 48))
        var sequence: UInt64 = 0

        /// A request whose reply is recorded under `name`.
        func request(_ name: String, _ r: ServiceCommand) {
            let trace = self.trace
            loop.handle(.request(r, Reply { trace.add(name, $0) }))
        }

        /// The next video frame, exposed 2 ms up to now.
        mutating func frame() {
            sequence += 1
            var m = FrameMetadata()
            m.exposureTimeMicroseconds = 2_000
            loop.handle(.frame(.i420(width: 64, height: 48, buffer: buffer, timestamp: clock.now(), sequence: sequence,
                                     metadata: m)))
        }

        /// `d` of the clock with a frame every 33 ms and the timer's tick whenever the loop asked for one.
        mutating func run(_ d: Duration, frames: Bool = true) {
            let end = clock.now() + d
            var nextFrame = clock.now()
            while clock.now() < end {
                if loop.nextWake <= clock.now() { loop.handle(.tick) }
                if frames, clock.now() >= nextFrame {
                    frame()
                    nextFrame = nextFrame + .milliseconds(33)
                }
                let next = min(loop.nextWake, frames ? nextFrame : end, end)
                clock.advance(to: max(next, clock.now() + .milliseconds(1)))
            }
        }

        func reply(_ name: String) -> ControlReply? { trace.replies.first { $0.0 == name }?.1 }

        /// A request that reached the service at `arrived`, handled now.
        func request(_ name: String, _ r: ServiceCommand, arrived: MonotonicTime) {
            let trace = self.trace
            var reply = Reply { trace.add(name, $0) }
            reply.arrivedAt = arrived
            loop.handle(.request(r, reply))
        }

        /// The jobs decided since the last call, taken and dropped: never run.
        func jobs() -> Int { loop.jobs.take().count }
    }

    private func replay(_ edit: (inout ShutterConfig) -> Void = { _ in }) throws -> Replay {
        var c = ShutterConfig()
        c.storage.root = try DaemonHarness.makeTempDir()
        c.video.width = 64
        c.video.height = 48
        c.still.width = 64
        c.still.height = 48
        c.audio.enabled = false
        c.shutdown.taps = 0
        edit(&c)
        let clock = ManualClock(start: .milliseconds(1_000_000))
        var roles = BoardRoles.simulated(config: c, clock: clock)
        // LED drivers run patterns on a task of their own: none here.
        roles.statusLED = nil
        roles.flashLED = nil
        let trace = Trace()
        let ctx = ServiceContext(config: c, roles: roles, clock: clock, wallClock: SystemWallClock(),
                                 storage: Storage(config: c), hooks: ServiceHooks(exitWithoutWaiting: { _ in }),
                                 log: Log("shutter.replay"), startedAt: clock.now())
        // Never run: the loop only hands it jobs, which the test drops.
        let supervisor = CameraSupervisor(open: roles.openCamera)
        let loop = ServiceLoop(ctx: ctx, supervisor: supervisor, leds: LEDs(roles: roles, clock: clock), preview: nil,
                               reloadConfig: nil, reportAction: { trace.add($0) })
        return Replay(loop: loop, clock: clock, trace: trace, config: c, camera: roles.sim!.camera)
    }

    /// Boots the loop as the camera supervisor and the card probe would: the
    /// camera started, the card probed (a job, its result written here), frames.
    private func boot(_ r: inout Replay) {
        r.loop.handle(.camera(.started(r.camera, CameraTarget(r.config), restart: false)))
        r.loop.handle(.tick)  // the first tick probes the card: a job
        XCTAssertGreaterThan(r.jobs(), 0, "the card probe (and the camera listing) leave as jobs")
        try? FileManager.default.createDirectory(atPath: r.config.storage.root, withIntermediateDirectories: true)
        let space: Result<FileSystemSpace, StorageError>
        do throws(SystemError) {
            space = .success(try FileSystemSpace.of(r.config.storage.root))
        } catch {
            space = .failure(StorageError(.ioError, "\(error)"))
        }
        r.loop.handle(.done(.storageProbed(space)))
        r.run(.milliseconds(100))
        XCTAssertEqual(r.loop.status.state, "idle", "ready once frames come and the card is writable")
        _ = r.trace.newActions()
        _ = r.jobs()
    }

    private func saved(_ id: CaptureID, _ name: String, pressedAt: MonotonicTime, now: MonotonicTime, root: String)
        -> ServiceEvent
    {
        let path = root + "/DCIM/100SHUTR/" + name
        return .done(.photo(PhotoPath.Outcome(
            id: id, result: .success(SavedPhoto(path: path, exposureStart: pressedAt, size: PixelSize(width: 64, height: 48),
                                                durableAt: now)),
            moment: "focused", pressedAt: pressedAt, releasedAt: pressedAt, afterDiscard: nil)))
    }

    /// The press's AF cycle (number `n`) came back: the still may be taken.
    private func autofocused(_ n: Int) -> ServiceEvent {
        .done(.autofocused(n, AutofocusResult(state: .focused, lensPosition: 1, timedOut: false)))
    }

    /// A client's `press` and `release` 120 ms apart that the loop reaches together (a
    /// loaded machine): dated when they arrived, the press is a tap, not "released within
    /// button.stabilityMs". Dated when the loop got to them, the two were 0 ms apart.
    func testAClientPressAndReleaseAreDatedWhenTheyArrivedNotWhenTheLoopReachedThem() throws {
        var r = try replay()
        boot(&r)
        let pressed = r.clock.now()
        r.clock.advance(to: pressed + .milliseconds(120))
        let released = r.clock.now()
        r.clock.advance(to: released + .milliseconds(200))  // the loop was busy meanwhile
        r.request("press", .press, arrived: pressed)
        r.request("release", .release, arrived: released)
        r.run(.seconds(3))  // the catch-up bound (no button answers here), the double tap's window, the tap
        let actions = r.trace.newActions()
        XCTAssertTrue(r.reply("press")?.ok == true)
        XCTAssertNil(r.reply("release")?.note, "not refused as too short: \(String(describing: r.reply("release")))")
        let take = actions.compactMap { a -> MonotonicTime? in
            if case let .takePhoto(_, .button(press), _, _, _) = a { return press }
            return nil
        }
        XCTAssertEqual(take, [pressed], "one photo, of the press at its arrival: \(actions)")
    }

    /// A photo in progress, one request waiting, the rest refused naming what is in
    /// progress; a button tap refused and counted; each answered with its own file.
    func testRequestsWhileAPhotoIsTakenOneWaitsTheRestAreRefusedEachAnsweredWithItsOwnFile() throws {
        var r = try replay { $0.still.moment = .focused }
        boot(&r)
        let t0 = r.clock.now()
        r.request("first", .photo)
        let first = r.trace.newActions()
        print("replay: first tap → \(first)")
        let take = try XCTUnwrap(first.compactMap { a -> (CaptureID, CaptureOrigin)? in
            if case let .takePhoto(id, origin, _, _, .focused) = a { return (id, origin) }
            return nil
        }.first, "\(first)")
        XCTAssertEqual(r.jobs(), 1, "the AF cycle leaves as a job; the still waits for its result")
        r.loop.handle(autofocused(1))
        XCTAssertEqual(r.jobs(), 1, "the AF cycle back (an event): the still (exposure) leaves as a job")
        XCTAssertEqual(first.first, .startAutofocus)
        XCTAssertEqual(r.loop.status.state, "taking-photo")

        r.request("second", .photo)
        XCTAssertNil(r.reply("second"), "the second waits for the first")
        r.request("third", .photo)
        let third = try XCTUnwrap(r.reply("third"), "the third is refused at once")
        XCTAssertFalse(third.ok)
        XCTAssertEqual(third.busy, true)
        XCTAssertEqual(third.error, "busy: taking a photo, and one request is already waiting")

        // The button, during the same photo: a tap, refused the same way.
        let press = r.clock.now()
        r.loop.handle(.button(.edge(ButtonEdge(pressed: true, time: press))))
        r.run(.milliseconds(120))
        r.loop.handle(.button(.edge(ButtonEdge(pressed: false, time: r.clock.now()))))
        r.run(.milliseconds(100))
        let during = r.trace.newActions()
        print("replay: second, third and a button tap → \(during)")
        XCTAssertTrue(during.contains(.refused(.busy, origin: .request(RequestID(3)))), "\(during)")
        XCTAssertTrue(during.contains { if case .refused(.busy, .button) = $0 { return true }; return false }, "\(during)")
        XCTAssertFalse(during.contains { if case .takePhoto = $0 { return true }; return false }, "nothing more is taken: \(during)")
        XCTAssertEqual(r.loop.status.counters.refusedPresses, 2)
        XCTAssertEqual(r.jobs(), 0, "no job for a refusal")

        // The first photo's job comes back: its own file for the first; the second starts.
        r.loop.handle(saved(take.0, "SHTR0001.JPG", pressedAt: t0, now: r.clock.now(), root: r.config.storage.root))
        let firstReply = try XCTUnwrap(r.reply("first"))
        XCTAssertTrue(firstReply.ok, "\(firstReply)")
        XCTAssertEqual(firstReply.files, [r.config.storage.root + "/DCIM/100SHUTR/SHTR0001.JPG"])
        let next = r.trace.newActions()
        let take2 = try XCTUnwrap(next.compactMap { a -> CaptureID? in
            if case let .takePhoto(id, origin, _, _, .focused) = a, origin == .request(RequestID(2)) { return id }
            return nil
        }.first, "the waiting request is taken next: \(next)")
        XCTAssertNotEqual(take2, take.0)
        XCTAssertEqual(r.jobs(), 1, "its AF cycle")
        r.loop.handle(autofocused(2))
        XCTAssertEqual(r.jobs(), 1, "then its still")
        XCTAssertNil(r.reply("second"))

        r.run(.milliseconds(300))
        r.loop.handle(saved(take2, "SHTR0002.JPG", pressedAt: t0, now: r.clock.now(), root: r.config.storage.root))
        let secondReply = try XCTUnwrap(r.reply("second"))
        XCTAssertEqual(secondReply.files, [r.config.storage.root + "/DCIM/100SHUTR/SHTR0002.JPG"])
        XCTAssertEqual(r.loop.status.state, "idle")
        XCTAssertEqual(r.loop.status.counters.photos, 2)
        XCTAssertEqual(r.trace.replies.map(\.0), ["third", "first", "second"], "each answered once")
    }

    /// No frames past the frame timeout: the watchdog restarts the camera (a job),
    /// captures are refused meanwhile, and the first frame after it makes it ready.
    func testNoFramesPastTheTimeoutRestartTheCameraAndRefuseCapturesUntilFramesCome() throws {
        var r = try replay {
            $0.watchdog.frameTimeoutMs = 300
            $0.watchdog.restartBackoffMs = 200
        }
        boot(&r)
        // The frame timeout (300 ms), then the first backoff (200 ms).
        r.run(.milliseconds(450), frames: false)
        XCTAssertEqual(r.loop.status.state, "idle", "backing off: not yet restarted")
        XCTAssertEqual(r.jobs(), 0)
        r.run(.milliseconds(100), frames: false)
        XCTAssertEqual(r.loop.status.state, "camera-unavailable")
        XCTAssertGreaterThanOrEqual(r.jobs(), 1, "the restart leaves as a job")
        XCTAssertEqual(r.loop.status.counters.cameraRestarts, 1)
        r.request("tap", .photo)
        let refused = try XCTUnwrap(r.reply("tap"))
        XCTAssertFalse(refused.ok)
        // Said as the LED's code means it (it was "refused: error code 2").
        XCTAssertEqual(refused.error, "refused: no camera: check the ribbon cable; the service keeps retrying")
        // The supervisor's answer: the camera started again, and frames.
        r.loop.handle(.camera(.started(r.camera, CameraTarget(r.config), restart: true)))
        r.run(.milliseconds(100))
        XCTAssertEqual(r.loop.status.state, "idle")
    }

    /// Settings waiting for a capture: a `set` during a photo is answered at once
    /// (remembered, "applied when the capture in progress ends") and reaches the
    /// camera only once the photo is saved.
    func testASetDuringAPhotoIsAnsweredAndReachesTheCameraWhenThePhotoIsSaved() async throws {
        var r = try replay { $0.still.moment = .focused }
        boot(&r)
        let t0 = r.clock.now()
        r.request("tap", .photo)
        let take = try XCTUnwrap(r.trace.newActions().compactMap { a -> CaptureID? in
            if case let .takePhoto(id, _, _, _, _) = a { return id }
            return nil
        }.first)
        _ = r.jobs()
        r.request("set", .set(key: "camera.exposure.ev", value: .int(-1)))
        let save = r.loop.jobs.take()
        XCTAssertEqual(save.count, 1, "only the state file is written: the camera is not touched during the photo")
        r.loop.handle(.done(.settingsSaved(op: 1, note: nil)))
        let set = try XCTUnwrap(r.reply("set"))
        XCTAssertTrue(set.ok, "\(set)")
        XCTAssertEqual(set.note, "applied when the capture in progress ends")
        XCTAssertEqual(set.value?.number, -1)
        XCTAssertEqual(r.camera.controlReport.asked.exposure.ev, 0)
        r.run(.milliseconds(200))
        XCTAssertEqual(r.jobs(), 0, "still nothing for the camera while the photo is taken")

        r.loop.handle(saved(take, "SHTR0001.JPG", pressedAt: t0, now: r.clock.now(), root: r.config.storage.root))
        let apply = r.loop.jobs.take()
        XCTAssertEqual(apply.count, 1, "the photo saved: the controls leave for the camera")
        // The one job run here, inline (SimCamera.apply keeps them): the camera has the change.
        r.loop.handle(.done(await apply[0].inline()))
        XCTAssertEqual(r.camera.controlReport.asked.exposure.ev, -1)
        XCTAssertEqual(r.jobs(), 0)
    }

    /// Found moving the end-to-end tests to the manual clock (issue 19 item 5): `set`
    /// was answered once the camera took the controls, before any frame carried them,
    /// so `shutterctl set camera.exposure.shutterUs 10000 && shutterctl tap` could give
    /// a `press` photo at the old shutter (`make hil controls` showed it on vimc). The
    /// answer now waits until the frames the camera had queued with the old controls
    /// have come (`ControlsDelivery.settleFrames`): a press on the answer pins a frame
    /// exposed after the change.
    func testAPressTheInstantASetIsAnsweredPinsAFrameExposedAfterTheChange() async throws {
        var r = try replay { $0.still.moment = .press }
        boot(&r)
        r.frame()
        r.request("set", .set(key: "camera.exposure.shutterUs", value: .int(10000)))
        let apply = r.loop.jobs.take()
        XCTAssertEqual(apply.count, 1, "the controls leave as a job")
        r.loop.handle(.done(await apply[0].inline()))  // the camera takes the controls (inline)
        let applied = r.clock.now()
        XCTAssertEqual(r.jobs(), 0, "no state file and no answer yet: the queued frames still have the old controls")
        for i in 1..<ControlsDelivery.settleFrames {
            r.clock.advance(by: .milliseconds(33))
            r.frame()
            XCTAssertEqual(r.jobs(), 0, "frame \(i) after the change: still waiting")
            XCTAssertNil(r.reply("set"))
        }
        r.clock.advance(by: .milliseconds(33))
        r.frame()
        XCTAssertEqual(r.jobs(), 1, "frame \(ControlsDelivery.settleFrames): the state file")
        r.loop.handle(.done(.settingsSaved(op: 1, note: nil)))
        let set = try XCTUnwrap(r.reply("set"))
        XCTAssertTrue(set.ok, "\(set)")
        // The press, at the instant of the answer: the frame nearest it began its exposure after the change.
        r.request("tap", .photo)
        let actions = r.trace.newActions()
        XCTAssertTrue(actions.contains { if case .pinPressFrame = $0 { return true }; return false }, "\(actions)")
        // The newest frame (exposed 2 ms up to the press) began after the change: it is chosen at once.
        XCTAssertGreaterThan(r.clock.now() - .milliseconds(2), applied)
        XCTAssertGreaterThanOrEqual(r.jobs(), 1, "the frame of the press, exposed with the change, is encoded at once")
    }

    /// Found moving ConcurrencyTests to the manual clock (issue 19 item 5): during a
    /// recording a command started, a button (or client `press`/`release`) tap takes
    /// a snapshot, unless its press has the same time as the recording's start:
    /// `CaptureStateMachine.tap` tells the recording's own press by time
    /// (`s != from`), so a press at the very instant a `record start`/`hold` request
    /// arrived is taken for the recording's own press: the tap makes nothing, is
    /// neither taken nor refused, and the client's `release` waits its whole bound
    /// (45 s) for "timed out waiting for the file". The machine now tells it by origin.
    func testATapWhosePressCameTheInstantARecordingStartedIsTakenOrRefused() throws {
        var m = CaptureStateMachine(configuration: .init(stillMoment: .press))
        let t0 = MonotonicTime.milliseconds(1_000_000)
        _ = m.handle(.ready, at: t0, lights: CaptureLights())
        let start = m.handle(.command(.recordStart(stopAfter: nil), RequestID(1)), at: t0, lights: CaptureLights())
        XCTAssertTrue(start.contains { if case .startRecording(_, _, t0, _) = $0 { return true }; return false }, "\(start)")
        // A client's press in the same instant, released 150 ms later: a tap.
        var actions = m.handle(.gesture(.pressed(at: t0)), at: t0, lights: CaptureLights())
        actions += m.handle(.gesture(.tap(start: t0, end: t0 + .milliseconds(150))), at: t0 + .milliseconds(150),
                            lights: CaptureLights())
        print("replay: a tap whose press came with the recording's start → \(actions)")
        let press = CaptureOrigin.button(press: t0)
        let answered = actions.contains { a in
            switch a {
            case .takeVideoSnapshot(_, press, _), .takePhoto(_, press, _, _, _), .refused(_, press), .answers(press, _): return true
            default: return false
            }
        }
        XCTAssertTrue(answered, "the tap is taken (a snapshot) or refused: \(actions)")
    }
}

extension Jobs.Job {
    /// The job run here, on the test's own task, as the service would run it (no queue, no group).
    func inline() async -> JobResult {
        switch self {
        case .task(let work): return await work()
        case .queue(_, let work): return work()
        }
    }
}
