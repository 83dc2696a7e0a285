// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
@testable import ShutterCore

private func ms(_ v: Int64) -> MonotonicTime { .milliseconds(v) }

/// Which frame is the press's photo (`PressFrameChoice`), and the frame's exposure start.
final class PressFrameChoiceTests: XCTestCase {
    let period = Duration.milliseconds(33)

    func choose(_ press: Int64, _ starts: [Int64]) -> PressFrameChoice {
        PressFrameChoice.choose(press: ms(press), exposureStarts: starts.map(ms), period: period)
    }

    func testTheClosestExposureStartWins() {
        XCTAssertEqual(choose(110, [66, 99, 132]), .frame(1), "started 11 ms before the press")
        XCTAssertEqual(choose(125, [66, 99, 132]), .frame(2), "starts 7 ms after the press")
        XCTAssertEqual(choose(99, [66, 99, 132]), .frame(1), "exactly at the press")
    }

    func testATieGoesToTheFrameAlreadyExposingAtThePress() {
        XCTAssertEqual(choose(115, [99, 131]), .frame(0))
    }

    func testWaitsForTheNextFrameWhenItMayBeCloser() {
        XCTAssertEqual(choose(125, [66, 99]), .waitForNext, "the next frame (~132) would be closer than 99")
        XCTAssertEqual(choose(105, [66, 99]), .frame(1), "the next frame (~132) cannot be closer than 99")
        XCTAssertEqual(choose(125, []), .waitForNext)
    }

    func testAfterWaitingLongTheLastFrameBeforeThePressIsThePhoto() {
        // libcamera's virtual camera stamps a request when it is queued, and under emulation
        // frames queued before the press keep arriving for over a second (issue 22).
        let starts = [66, 99].map(ms)
        XCTAssertEqual(PressFrameChoice.choose(press: ms(125), exposureStarts: starts, period: period, waitedLong: false),
                       .waitForNext)
        XCTAssertEqual(PressFrameChoice.choose(press: ms(125), exposureStarts: starts, period: period, waitedLong: true),
                       .frame(1), "no closer frame came: the one exposed before the press")
        XCTAssertEqual(PressFrameChoice.choose(press: ms(125), exposureStarts: [], period: period, waitedLong: true),
                       .waitForNext, "no frame at all: nothing to take")
        XCTAssertEqual(PressFrameChoice.choose(press: ms(100), exposureStarts: [150, 183].map(ms), period: period,
                                               waitedLong: true), .none, "too late stays too late")
    }

    func testNeverMoreThanOneFrameAfterThePress() {
        // A dropped frame: the next one kept starts 50 ms after the press.
        XCTAssertEqual(choose(100, [90, 150]), .frame(0), "150 is more than a frame after the press")
        XCTAssertEqual(choose(100, [150, 183]), .none, "every frame kept is too late")
        XCTAssertEqual(choose(100, [120, 153]), .frame(0), "the press predates the ring: the first frame after it")
    }

    func testExposureStartIsTheTimestampMinusTheExposureTime() {
        let withExposure = Frame(width: 2, height: 2, format: .i420, planes: [], timestamp: ms(1000), sequence: 1,
                                 metadata: FrameMetadata(exposureTimeMicroseconds: 20_000))
        XCTAssertEqual(withExposure.exposureStart, ms(980), "SensorTimestamp marks the frame start, after the exposure")
        // vimc reports only SensorTimestamp: the timestamp itself.
        let without = Frame(width: 2, height: 2, format: .i420, planes: [], timestamp: ms(1000), sequence: 1)
        XCTAssertEqual(without.exposureStart, ms(1000))
        XCTAssertEqual(choose(990, [967, 1000]), .frame(1))
        let frames = [without, withExposure]
        XCTAssertEqual(PressFrameChoice.choose(press: ms(985), exposureStarts: frames.map(\.exposureStart), period: period),
                       .frame(1), "matched on exposure start (980), not on the timestamp")
    }
}

/// The state machine in the `press` moment: a press pins its frame instead of
/// starting autofocus; a flash photo is taken focused.
final class CaptureStateMachinePressMomentTests: XCTestCase {
    func machine() -> CaptureStateMachine {
        var m = CaptureStateMachine(configuration: .init(stillMoment: .press))
        _ = m.handle(.ready, at: ms(0))
        return m
    }

    func testAPressPinsItsFrameAndATapWritesIt() {
        var m = machine()
        let p = CaptureOrigin.button(press: ms(100))
        XCTAssertEqual(m.handle(.gesture(.pressed(at: ms(100))), at: ms(120)),
                       [.pinPressFrame(origin: p, at: ms(100)), .startSpeculativeClip(from: ms(100))], "no autofocus")
        let tap = m.handle(.gesture(.tap(start: ms(100), end: ms(300))), at: ms(300))
        XCTAssertTrue(tap.contains(.takePhoto(id: CaptureID(1), origin: p, pressedAt: ms(100), flash: false, moment: .press)), "\(tap)")
        XCTAssertFalse(tap.contains(.startAutofocus))
    }

    func testAPhotoRequestPinsTheFrameOfItsArrival() {
        var m = machine()
        let o = CaptureOrigin.request(RequestID(1))
        let a = m.handle(.command(.photo, RequestID(1)), at: ms(200))
        XCTAssertEqual(Array(a.prefix(2)), [.pinPressFrame(origin: o, at: ms(200)),
                                            .takePhoto(id: CaptureID(1), origin: o, pressedAt: ms(200), flash: false, moment: .press)])
    }

    func testAQueuedPressPinsWhenItArrives() {
        var m = machine()
        _ = m.handle(.gesture(.pressed(at: ms(100))), at: ms(120))
        _ = m.handle(.gesture(.tap(start: ms(100), end: ms(200))), at: ms(200))
        let q = m.handle(.gesture(.pressed(at: ms(250))), at: ms(270))
        XCTAssertTrue(q.contains(.pinPressFrame(origin: .button(press: ms(250)), at: ms(250))), "\(q)")
        _ = m.handle(.gesture(.tap(start: ms(250), end: ms(300))), at: ms(300))
        let next = m.handle(.photoSaved(id: CaptureID(1), path: "/p"), at: ms(400))
        XCTAssertTrue(next.contains(.takePhoto(id: CaptureID(2), origin: .button(press: ms(250)), pressedAt: ms(250),
                                               flash: false, moment: .press)), "\(next)")
        XCTAssertFalse(next.contains(.startAutofocus))
    }

    func testAFlashPhotoIsTakenFocusedWithAutofocus() {
        var m = machine()
        let on = CaptureLights(flashMode: .on)
        _ = m.handle(.gesture(.pressed(at: ms(100))), at: ms(120), lights: on)
        let tap = m.handle(.gesture(.tap(start: ms(100), end: ms(300))), at: ms(300), lights: on)
        let af = tap.firstIndex(of: .startAutofocus)
        let photo = tap.firstIndex(of: .takePhoto(id: CaptureID(1), origin: .button(press: ms(100)), pressedAt: ms(100),
                                                  flash: true, moment: .focused))
        XCTAssertNotNil(af, "\(tap)")
        XCTAssertNotNil(photo, "\(tap)")
        if let af, let photo { XCTAssertLessThan(af, photo) }
    }

    func testAHeldPressIsNoLongerPendingSoItsPinGoes() {
        var m = machine()
        _ = m.handle(.gesture(.pressed(at: ms(100))), at: ms(120))
        XCTAssertTrue(m.isPending(.button(press: ms(100))))
        _ = m.handle(.gesture(.holdStarted(pressedAt: ms(100), at: ms(1100))), at: ms(1100))
        XCTAssertFalse(m.isPending(.button(press: ms(100))), "the service drops the pin of a press no longer pending")
    }
}

final class StillMomentConfigTests: XCTestCase {
    func testMomentAndStillStreamAreValidated() throws {
        XCTAssertEqual(ShutterConfig().still.moment, .press, "the press moment is the default")
        XCTAssertNil(ShutterConfig().sim.stillStream, "one stream unless told")
        let key = try XCTUnwrap(ConfigSchema.byPath["still.moment"])
        XCTAssertThrowsError(try ConfigSchema.check(.string("later"), for: key))
        XCTAssertNoThrow(try ConfigSchema.check(.string("focused"), for: key))
        let stream = try XCTUnwrap(ConfigSchema.byPath["sim.stillStream"])
        XCTAssertEqual(try ConfigSchema.check(.array([.int(2304), .int(1296)]), for: stream), .array([.int(2304), .int(1296)]))
        XCTAssertEqual(try ConfigSchema.check(.null, for: stream), .null)
        XCTAssertEqual(try ConfigSchema.parseOverride("2304x1296", for: stream), .array([.int(2304), .int(1296)]))
        for bad: JSONValue in [.array([.int(2305), .int(1296)]), .array([.int(2304)]), .array([.int(8), .int(8)]), .string("big")] {
            XCTAssertThrowsError(try ConfigSchema.check(bad, for: stream), "\(bad)") { e in
                XCTAssertEqual((e as? ConfigSchema.Violation)?.keyPath, "sim.stillStream")
            }
        }
    }

}

final class StillMomentConfigFileTests: ConfigTestCase {
    func testAConfigFileNamesTheKeyAndLine() throws {
        let e = try error(file: "{\n  \"still\": {\"moment\": \"soon\"}\n}\n")
        XCTAssertEqual(e.keyPath, "still.moment")
        XCTAssertTrue(e.source.contains("shutter.json line 2"), e.source)
        let board = try error { _ = try self.load(overrides: ["sim.stillStream": "2304x"]) }
        XCTAssertEqual(board.keyPath, "sim.stillStream")
        let path = try write("shutter.json", #"{"still": {"moment": "focused"}, "sim": {"stillStream": [1280, 720]}}"#)
        let c = try load(file: path)
        XCTAssertEqual(c.still.moment, .focused)
        XCTAssertEqual(c.sim.stillStream, [1280, 720])
        try write("boards/sim.json", #"{"board": {"name": "sim"}, "still": {"moment": "focused"}}"#)
        XCTAssertEqual(try load().still.moment, .focused, "board files may set it")
    }
}
