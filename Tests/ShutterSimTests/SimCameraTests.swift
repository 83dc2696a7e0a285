// SPDX-License-Identifier: BSD-2-Clause
import XCTest
import ShutterCore
@testable import ShutterSim

final class SimCameraTests: XCTestCase {
    private func small() -> SimCamera.Settings {
        var s = SimCamera.Settings()
        s.width = 320; s.height = 240; s.fps = 50; s.stillWidth = 640; s.stillHeight = 480
        return s
    }

    func testFramesArrivePacedWithMonotonicTimestampsAndAMovingPicture() async throws {
        let cam = SimCamera(settings: small())
        let before = SystemClock().now().nanoseconds
        let stream = try await cam.start()
        // Frames are not kept: each goes back to the camera's pool when dropped.
        var stamps: [Int64] = []
        var sequences: [UInt64] = []
        var firstLuma: [UInt8] = []
        var lastLuma: [UInt8] = []
        for await f in stream {
            XCTAssertEqual(f.width, 320)
            XCTAssertEqual(f.format, .i420)
            let row = Array(UnsafeRawBufferPointer(start: f.planes[0].base + 120 * 320, count: 320))
            if stamps.isEmpty { firstLuma = row }
            lastLuma = row
            stamps.append(f.timestamp.nanoseconds)
            sequences.append(f.sequence)
            if stamps.count == 10 { break }
        }
        await cam.stop()
        for (a, b) in zip(stamps, stamps.dropFirst()) {
            XCTAssertEqual(b - a, 20_000_000, "50 fps: 20 ms apart on the sensor clock")
        }
        // On CLOCK_MONOTONIC: between the readings of it before the start and after the last frame.
        let after = SystemClock().now().nanoseconds
        XCTAssertGreaterThanOrEqual(stamps.first!, before, "timestamps are on CLOCK_MONOTONIC")
        XCTAssertLessThanOrEqual(stamps.last!, after, "timestamps are on CLOCK_MONOTONIC")
        XCTAssertNotEqual(firstLuma, lastLuma, "the pattern moves")
        XCTAssertEqual(sequences, Array(sequences[0]..<sequences[0] + 10))
        XCTAssertEqual(cam.droppedFrames, 0)
    }

    func testStallStopsFramesAndDisappearEndsTheStream() async throws {
        let clock = ManualClock(start: .milliseconds(5_000))
        let board = SimBoard(camera: small(), clock: clock)
        let cam = board.camera
        let stream = try await cam.start()
        var it = stream.makeAsyncIterator()
        await board.settle()
        let first = await it.next()
        XCTAssertNotNil(first)
        cam.fault = .stall
        let before = cam.deliveredFrames
        await board.advance(by: .milliseconds(300))
        XCTAssertEqual(cam.deliveredFrames, before, "no frames while stalled")
        cam.fault = .disappear
        var rest = 0
        while await it.next() != nil { rest += 1 }
        XCTAssertEqual(rest, 0, "the stream ends")
        do { _ = try await cam.start(); XCTFail("start must fail while unplugged") } catch let e as CameraError {
            XCTAssertEqual(e.code, .noDevice)
        }
        cam.fault = .none
        let again = try await cam.start()
        var it2 = again.makeAsyncIterator()
        await board.advance(by: .milliseconds(20))
        let f = await it2.next()
        XCTAssertEqual(f?.timestamp, .milliseconds(5_300), "frames again after the camera returns")
        await cam.stop()
    }

    func testStillIsFullSizeAndCarriesExposureForTheLightLevel() async throws {
        let cam = SimCamera(settings: small())
        cam.lux = 400
        let bright = try await cam.captureStill()
        XCTAssertEqual(bright.width, 640)
        XCTAssertEqual(bright.height, 480)
        cam.lux = 2
        let dark = try await cam.captureStill()
        XCTAssertGreaterThan(dark.metadata.exposureTimeMicroseconds!, bright.metadata.exposureTimeMicroseconds!)
        XCTAssertGreaterThan(dark.metadata.analogueGain!, bright.metadata.analogueGain!)
        XCTAssertEqual(dark.metadata.lux, 2)
        cam.fault = .error
        do { _ = try await cam.captureStill(); XCTFail("fault must fail the still") } catch {}
    }

    func testAutofocusTakesItsTimeAndRespectsTheDeadline() async {
        var s = small()
        s.autofocusMs = 500
        let clock = ManualClock()
        let cam = SimCamera(settings: s, clock: clock)
        let slow = Task { await cam.autofocus(timeout: .milliseconds(300)) }
        while clock.sleeperCount == 0 { await Task.yield() }
        clock.advance(by: .milliseconds(300))
        let r = await slow.value
        XCTAssertTrue(r.timedOut)
        let fast = Task { await cam.autofocus(timeout: .milliseconds(1000)) }
        while clock.sleeperCount == 0 { await Task.yield() }
        clock.advance(by: .milliseconds(500))
        let f = await fast.value
        XCTAssertEqual(f.state, .focused)
        XCTAssertFalse(f.timedOut)
    }
}

final class SimMicrophoneTests: XCTestCase {
    func testToneAtTheSampleClock() async throws {
        let mic = SimMicrophone(frequency: 1000)
        let stream = try mic.start(sampleRate: 48000, channels: 1)
        var chunks: [AudioChunk] = []
        for await c in stream {
            chunks.append(c)
            if chunks.count == 20 { break }
        }
        mic.stop()
        let samples = chunks.flatMap(\.samples)
        XCTAssertEqual(samples.count, 20 * 480)
        var crossings = 0
        for (a, b) in zip(samples, samples.dropFirst()) where (a < 0) != (b < 0) { crossings += 1 }
        XCTAssertEqual(Double(crossings) / 2 / 0.2, 1000, accuracy: 10, "a 1 kHz tone")
        for (a, b) in zip(chunks, chunks.dropFirst()) {
            XCTAssertEqual(b.timestamp.nanoseconds - a.timestamp.nanoseconds, 10_000_000)
        }
        XCTAssertEqual(Int(samples.map { abs(Int($0)) }.max()!), 16383, accuracy: 5)
    }
}

final class SimButtonTests: XCTestCase {
    func testEdgesCarryTimesAndRepeatsAreIgnored() async {
        let clock = ManualClock(start: .milliseconds(1000))
        let b = SimButton(clock: clock)
        let edges = b.events()
        b.press()
        b.press()
        clock.advance(by: .milliseconds(250))
        b.release()
        b.catchUp()
        var got: [ButtonEvent] = []
        for await e in edges {
            got.append(e)
            if got.count == 3 { break }
        }
        XCTAssertEqual(got, [.edge(ButtonEdge(pressed: true, time: .milliseconds(1000))),
                             .edge(ButtonEdge(pressed: false, time: .milliseconds(1250))),
                             .caughtUp(.milliseconds(1250))])
    }
}
