// SPDX-License-Identifier: BSD-2-Clause
import XCTest
import ShutterCore
import Synchronization
@testable import ShutterSim

/// The simulated board on a ManualClock: every verdict here is decided by the
/// clock the test moves, never by real time.
final class SimManualClockTests: XCTestCase {
    private let t0 = MonotonicTime.milliseconds(10_000)

    private func settings(fps: Int = 30, modeSwitchMs: Int64 = 500) -> SimCamera.Settings {
        var s = SimCamera.Settings()
        s.width = 64; s.height = 48; s.stillWidth = 128; s.stillHeight = 96
        s.fps = fps
        s.modeSwitchMs = modeSwitchMs
        return s
    }

    /// Frame k of a stream started at `origin`, at exactly `origin + k / fps`.
    private func slot(_ k: Int64, from origin: MonotonicTime, fps: Int64 = 30) -> MonotonicTime {
        MonotonicTime(nanoseconds: origin.nanoseconds + k * 1_000_000_000 / fps)
    }

    /// Reads frames as a consumer would, keeping only their stamps (the buffers go back at once).
    private func read(_ stream: AsyncStream<Frame>, into seen: FrameLog) -> Task<Void, Never> {
        Task {
            for await f in stream { seen.add(f) }
        }
    }

    func testOneSecondOfClockIsExactlyFpsFramesOnTheSensorGrid() async throws {
        let clock = ManualClock(start: t0)
        var s = settings()
        s.streamDepth = 64  // the test reads after the second has passed
        let cam = SimCamera(settings: s, clock: clock)
        let stream = try await cam.start()
        var it = stream.makeAsyncIterator()
        let first = await it.next()
        XCTAssertEqual(first?.timestamp, t0, "the first frame is exposed at the start")
        await clock.advance(by: .seconds(1)) { await cam.settle() }
        XCTAssertEqual(cam.deliveredFrames, 31, "one second: 30 frames after the first")
        await cam.stop()
        var stamps: [MonotonicTime] = []
        var sequences: [UInt64] = []
        while let f = await it.next() {
            stamps.append(f.timestamp)
            sequences.append(f.sequence)
        }
        XCTAssertEqual(stamps, (1...30).map { slot($0, from: t0) }, "33.33 ms apart, no drift")
        XCTAssertEqual(stamps.last, t0 + .seconds(1))
        XCTAssertEqual(sequences, Array(1...30))
        XCTAssertEqual(cam.droppedFrames, 0)
    }

    func testAConsumerThatKeepsUpLosesNothingOnTheDefaultDepth() async throws {
        let clock = ManualClock(start: t0)
        let board = SimBoard(camera: settings(), clock: clock)
        let seen = FrameLog()
        let reader = read(try await board.camera.start(), into: seen)
        await board.advance(by: .seconds(2), consumers: true)
        await board.camera.stop()
        await reader.value
        XCTAssertEqual(seen.stamps, (0...60).map { slot($0, from: t0) })
        XCTAssertEqual(board.camera.droppedFrames, 0)
    }

    func testAStillStopsVideoForTheModeSwitchAndVideoResumesAfterTheGap() async throws {
        let clock = ManualClock(start: t0)
        let board = SimBoard(camera: settings(), clock: clock)
        let cam = board.camera
        let seen = FrameLog()
        let reader = read(try await cam.start(), into: seen)
        await board.advance(by: .milliseconds(200), consumers: true)
        XCTAssertEqual(seen.stamps.last, t0 + .milliseconds(200), "frame 6")

        let still = Task { () throws -> (Frame, MonotonicTime) in
            let f = try await cam.captureStill()
            return (f, clock.now())
        }
        while !cam.isSwitchingModes { await Task.yield() }
        await board.advance(by: .milliseconds(499), consumers: true)
        XCTAssertTrue(cam.isSwitchingModes)
        XCTAssertEqual(seen.stamps.last, t0 + .milliseconds(200), "no video during the switch")
        XCTAssertNil(cam.lastVideoGap)

        await board.advance(by: .milliseconds(1), consumers: true)
        let (photo, returned) = try await still.value
        XCTAssertEqual(photo.width, 128)
        XCTAssertEqual(photo.exposureStart, t0 + .milliseconds(450), "exposed halfway through the switch")
        XCTAssertEqual(returned, t0 + .milliseconds(700), "returns once video is back, as LibcameraCamera does")
        XCTAssertFalse(cam.isSwitchingModes)

        await board.advance(by: .milliseconds(300), consumers: true)
        await cam.stop()
        await reader.value
        let resumed = t0 + .milliseconds(700)
        XCTAssertEqual(seen.stamps, (0...6).map { slot($0, from: t0) } + (0...9).map { slot($0, from: resumed) })
        XCTAssertEqual(cam.lastVideoGap, .milliseconds(500))
        XCTAssertEqual(seen.sequences, Array(0...6) + Array(21...30), "the sensor's 15 slots of the gap are skipped")
        XCTAssertEqual(cam.modeSwitches, 1)
        XCTAssertEqual(cam.stillsCaptured, 1)
        XCTAssertEqual(cam.droppedFrames, 0)
    }

    func testTwoStillsAtOnceAreServedOneAfterTheOther() async throws {
        let clock = ManualClock(start: t0)
        let board = SimBoard(camera: settings(), clock: clock)
        let cam = board.camera
        let seen = FrameLog()
        let reader = read(try await cam.start(), into: seen)
        await board.settle(consumers: true)
        let stills = (0..<2).map { _ in Task { try await cam.captureStill() } }
        while !(cam.isSwitchingModes && cam.stillsWaiting == 1) { await Task.yield() }
        await board.advance(by: .milliseconds(499), consumers: true)
        XCTAssertEqual(cam.stillsCaptured, 0)
        XCTAssertEqual(cam.stillsWaiting, 1)
        await board.advance(by: .milliseconds(1), consumers: true)
        XCTAssertEqual(cam.stillsCaptured, 1, "the first is done at 500 ms")
        XCTAssertEqual(cam.stillsWaiting, 0)
        XCTAssertTrue(cam.isSwitchingModes, "the second switch starts when the first ends")
        await board.advance(by: .milliseconds(499), consumers: true)
        XCTAssertEqual(cam.stillsCaptured, 1)
        await board.advance(by: .milliseconds(1), consumers: true)
        XCTAssertEqual(cam.stillsCaptured, 2)
        XCTAssertFalse(cam.isSwitchingModes)
        var photos: [Frame] = []
        for s in stills { photos.append(try await s.value) }
        XCTAssertEqual(photos.map(\.exposureStart).sorted(), [t0 + .milliseconds(250), t0 + .milliseconds(750)])
        XCTAssertEqual(cam.modeSwitches, 2)

        await board.advance(by: .milliseconds(100), consumers: true)
        await cam.stop()
        await reader.value
        XCTAssertEqual(seen.stamps, [t0] + (0...3).map { slot($0, from: t0 + .seconds(1)) },
                       "no frame between the two stills")
        XCTAssertEqual(cam.lastVideoGap, .seconds(1))
    }

    func testAutofocusDuringASwitchWaitsForVideoAndKeepsItsDeadline() async throws {
        let clock = ManualClock(start: t0)
        var s = settings()
        s.autofocusMs = 120
        let board = SimBoard(camera: s, clock: clock)
        let cam = board.camera
        let reader = read(try await cam.start(), into: FrameLog())
        await board.settle(consumers: true)
        let still = Task { try await cam.captureStill() }
        while !cam.isSwitchingModes { await Task.yield() }
        await board.advance(by: .milliseconds(100), consumers: true)
        let sleepers = clock.sleeperCount
        let patient = Task { (await cam.autofocus(timeout: .seconds(1)), clock.now()) }
        let hurried = Task { (await cam.autofocus(timeout: .milliseconds(300)), clock.now()) }
        while clock.sleeperCount < sleepers + 2 { await Task.yield() }
        // Each result is read with the clock stopped at the instant it is due.
        await board.advance(by: .milliseconds(300), consumers: true)
        let (h, hAt) = await hurried.value
        XCTAssertTrue(h.timedOut)
        XCTAssertEqual(hAt, t0 + .milliseconds(400), "never past its deadline")
        await board.advance(by: .milliseconds(220), consumers: true)
        let (p, pAt) = await patient.value
        XCTAssertEqual(p.state, .focused)
        XCTAssertEqual(pAt, t0 + .milliseconds(620), "converges 120 ms after video returns at 500 ms")
        _ = try await still.value
        await cam.stop()
        await reader.value
    }

    func testStopDuringASwitchEndsTheStreamAtOnceAndTheStillStillArrives() async throws {
        let clock = ManualClock(start: t0)
        let board = SimBoard(camera: settings(), clock: clock)
        let cam = board.camera
        let seen = FrameLog()
        let reader = read(try await cam.start(), into: seen)
        await board.settle(consumers: true)
        let still = Task { try await cam.captureStill() }
        while !cam.isSwitchingModes { await Task.yield() }
        await board.advance(by: .milliseconds(100), consumers: true)
        await cam.stop()
        await reader.value  // the stream has ended, mid-switch
        await board.advance(by: .seconds(1), consumers: true)
        let photo = try await still.value
        XCTAssertEqual(photo.exposureStart, t0 + .milliseconds(250))
        XCTAssertFalse(cam.isSwitchingModes)
        XCTAssertEqual(seen.stamps, [t0])
        XCTAssertEqual(cam.deliveredFrames, 1, "video stays off after the switch")
        XCTAssertNil(cam.lastVideoGap)

        // A start waits for a switch in flight, then streams from its own start.
        let again = read(try await cam.start(), into: FrameLog())
        await board.settle(consumers: true)
        let next = Task { try await cam.captureStill() }
        while !cam.isSwitchingModes { await Task.yield() }
        let restarted = Task { try await cam.start() }
        while cam.controlQueueLength == 0 { await Task.yield() }
        await board.advance(by: .milliseconds(500))
        _ = try await next.value
        var it = try await restarted.value.makeAsyncIterator()
        let first = await it.next()
        XCTAssertEqual(first?.timestamp, t0 + .milliseconds(1600), "started after the switch (1100 + 500 ms)")
        await again.value  // the new start ended the stream the still resumed
        await cam.stop()
    }

    func testACancelledCallerDoesNotLeaveVideoOff() async throws {
        let clock = ManualClock(start: t0)
        let board = SimBoard(camera: settings(), clock: clock)
        let cam = board.camera
        let seen = FrameLog()
        let reader = read(try await cam.start(), into: seen)
        await board.settle(consumers: true)
        let still = Task { try await cam.captureStill() }
        while !cam.isSwitchingModes { await Task.yield() }
        still.cancel()
        await board.advance(by: .milliseconds(600), consumers: true)
        _ = try? await still.value
        XCTAssertFalse(cam.isSwitchingModes)
        XCTAssertEqual(cam.lastVideoGap, .milliseconds(500))
        await cam.stop()
        await reader.value
        XCTAssertEqual(seen.stamps, [t0] + (0...3).map { slot($0, from: t0 + .milliseconds(500)) })
    }

    func testFaultsDuringASwitch() async throws {
        let clock = ManualClock(start: t0)
        let board = SimBoard(camera: settings(), clock: clock)
        let cam = board.camera
        let reader = read(try await cam.start(), into: FrameLog())
        await board.settle(consumers: true)
        // Unplugged mid-switch: the stream ends at once, the still fails at its exposure, video stays off.
        let lost = Task { try await cam.captureStill() }
        while !cam.isSwitchingModes { await Task.yield() }
        await board.advance(by: .milliseconds(100), consumers: true)
        cam.fault = .disappear
        await reader.value
        await board.advance(by: .milliseconds(150), consumers: true)
        do { _ = try await lost.value; XCTFail("the still must fail") } catch let e as CameraError {
            XCTAssertEqual(e.code, .noDevice)
        }
        XCTAssertEqual(clock.now(), t0 + .milliseconds(250))
        XCTAssertFalse(cam.isSwitchingModes)

        // A failing still restores video, as the real camera's switch back does.
        cam.fault = .none
        let seen = FrameLog()
        let again = read(try await cam.start(), into: seen)
        await board.settle(consumers: true)
        let failing = Task { try await cam.captureStill() }
        while !cam.isSwitchingModes { await Task.yield() }
        cam.fault = .error
        await board.advance(by: .milliseconds(500), consumers: true)
        do { _ = try await failing.value; XCTFail("the still must fail") } catch let e as CameraError {
            XCTAssertEqual(e.code, .system)
        }
        cam.fault = .none
        await board.advance(by: .milliseconds(100), consumers: true)
        await cam.stop()
        await again.value
        let start = t0 + .milliseconds(250)
        XCTAssertEqual(seen.stamps, [start] + (0...3).map { slot($0, from: start + .milliseconds(500)) })
    }

    func testAStillRefusedBehindAnotherDoesNotLeaveVideoOff() async throws {
        let clock = ManualClock(start: t0)
        let board = SimBoard(camera: settings(), clock: clock)
        let cam = board.camera
        let seen = FrameLog()
        let reader = read(try await cam.start(), into: seen)
        await board.settle(consumers: true)
        let first = Task { try await cam.captureStill() }
        while !cam.isSwitchingModes { await Task.yield() }
        let second = Task { try await cam.captureStill() }
        while cam.stillsWaiting == 0 { await Task.yield() }
        await board.advance(by: .milliseconds(300), consumers: true)
        cam.fault = .stall  // after the first still's exposure, before the second's turn
        await board.advance(by: .milliseconds(200), consumers: true)
        let photo = try await first.value
        XCTAssertEqual(photo.exposureStart, t0 + .milliseconds(250))
        do { _ = try await second.value; XCTFail("a stalled camera refuses the still") } catch let e as CameraError {
            XCTAssertEqual(e.code, .timeout)
        }
        XCTAssertFalse(cam.isSwitchingModes)
        await board.advance(by: .milliseconds(100), consumers: true)
        cam.fault = .none
        await board.advance(by: .milliseconds(100), consumers: true)
        await cam.stop()
        await reader.value
        let resumed = t0 + .milliseconds(500)
        XCTAssertEqual(seen.stamps, [t0] + (4...6).map { slot($0, from: resumed) }, "video is back once the stall ends")
    }

    func testFramesHeldDownstreamUseUpTheBuffersAndAreCounted() async throws {
        let clock = ManualClock(start: t0)
        var s = settings()
        s.bufferCount = 6
        let board = SimBoard(camera: s, clock: clock)
        let cam = board.camera
        let held = Mutex<[Frame]>([])
        let stream = try await cam.start()
        let reader = Task { for await f in stream { held.withLock { $0.append(f) } } }
        await board.advance(by: .milliseconds(300), consumers: true)
        XCTAssertEqual(cam.deliveredFrames, 6, "six buffers, all held")
        XCTAssertEqual(cam.framesLostForBuffers, 4, "slots 6 to 9 found no buffer")
        XCTAssertEqual(cam.droppedFrames, 4)
        held.withLock { $0.removeAll() }  // the consumer lets go: the buffers go back
        await board.advance(by: .milliseconds(100), consumers: true)
        XCTAssertEqual(held.withLock { $0.map(\.timestamp) }, (10...12).map { slot($0, from: t0) })
        await cam.stop()
        await reader.value
        held.withLock { $0.removeAll() }
    }

    func testOneSecondOfClockIsOneSecondOfAudio() async throws {
        let clock = ManualClock(start: t0)
        let board = SimBoard(camera: settings(), clock: clock)
        let mic = board.microphone
        let stream = try mic.start(sampleRate: 48000, channels: 2)
        let chunks = Task { () -> [AudioChunk] in
            var got: [AudioChunk] = []
            for await c in stream { got.append(c) }
            return got
        }
        await board.advance(by: .seconds(1), consumers: true)
        XCTAssertEqual(mic.deliveredSamples, 48000)
        await board.advance(by: .seconds(1), consumers: true)
        XCTAssertEqual(mic.deliveredSamples, 96000)
        mic.stop()
        let got = await chunks.value
        XCTAssertEqual(got.count, 200, "10 ms chunks")
        XCTAssertEqual(got.reduce(0) { $0 + $1.frameCount }, 96000, "two seconds of samples for two of clock")
        XCTAssertEqual(got.map(\.timestamp), (0..<200).map { t0 + .milliseconds(10 * Int64($0)) })
        XCTAssertTrue(got.allSatisfy { $0.channels == 2 && $0.samples.count == 960 })
        XCTAssertEqual(mic.overruns, 0)
    }

    func testTheWholeBoardMovesTogether() async throws {
        let clock = ManualClock(start: t0)
        let board = SimBoard(camera: settings(), clock: clock)
        let frames = FrameLog()
        let video = read(try await board.camera.start(), into: frames)
        let sound = try board.microphone.start(sampleRate: 16000, channels: 1)
        let audio = Task { () -> Int in
            var n = 0
            for await c in sound { n += c.frameCount }
            return n
        }
        let edges = board.button.events()
        await board.advance(by: .milliseconds(250), consumers: true)
        board.button.press()
        await board.advance(by: .milliseconds(750), consumers: true)
        board.button.release()
        board.camera.fault = .disappear
        board.microphone.stop()
        await video.value
        let samples = await audio.value
        var it = edges.makeAsyncIterator()
        let down = await it.next(), up = await it.next()
        XCTAssertEqual(down, .edge(ButtonEdge(pressed: true, time: t0 + .milliseconds(250))))
        XCTAssertEqual(up, .edge(ButtonEdge(pressed: false, time: t0 + .seconds(1))))
        XCTAssertEqual(frames.stamps.count, 31)
        XCTAssertEqual(samples, 16000)
    }

    func testManualClockStepsThroughEveryDeadline() async {
        let clock = ManualClock(start: t0)
        let woke = Mutex<[MonotonicTime]>([])
        let sleeper = Task {
            for ms in [30, 10, 45] as [Int64] {
                try? await clock.sleep(for: .milliseconds(ms))
                woke.withLock { $0.append(clock.now()) }
            }
        }
        while clock.sleeperCount == 0 { await Task.yield() }
        // settle: the sleeper has either slept again or finished.
        let settled: @Sendable () async -> Void = {
            while clock.sleeperCount == 0 && woke.withLock({ $0.count }) < 3 { await Task.yield() }
        }
        await clock.advance(by: .milliseconds(100), settle: settled)
        await sleeper.value
        XCTAssertEqual(woke.withLock { $0 }, [t0 + .milliseconds(30), t0 + .milliseconds(40), t0 + .milliseconds(85)])
        XCTAssertEqual(clock.now(), t0 + .milliseconds(100))
        XCTAssertNil(clock.nextDeadline)
    }
}

/// Stamps and sequence numbers of the frames a reader saw.
final class FrameLog: Sendable {
    private let log = Mutex<[(MonotonicTime, UInt64)]>([])
    func add(_ f: Frame) { log.withLock { $0.append((f.timestamp, f.sequence)) } }
    var stamps: [MonotonicTime] { log.withLock { $0.map(\.0) } }
    var sequences: [UInt64] { log.withLock { $0.map(\.1) } }
}
