// SPDX-License-Identifier: BSD-2-Clause
import XCTest
@testable import ShutterCore

private func t(_ ms: Int64) -> MonotonicTime { .milliseconds(ms) }
private func id(_ n: UInt64) -> CaptureID { CaptureID(n) }
private func rq(_ n: UInt64) -> RequestID { RequestID(n) }
private func press(_ ms: Int64) -> CaptureOrigin { .button(press: t(ms)) }
private let max60 = Duration.seconds(60)

/// A ready machine plus shorthand for the inputs; `still.moment` focused unless a test
/// says otherwise (these tests were written for it; PressMomentTests has the press's).
private struct Rig {
    var m: CaptureStateMachine
    /// The settings' flash mode and torch, as the service keeps them: a double tap's mode is written back.
    var lights: CaptureLights

    init(_ config: CaptureStateMachine.Configuration = .init(stillMoment: .focused), flash: FlashMode = .off, torch: Bool = false) {
        m = CaptureStateMachine(configuration: config)
        lights = CaptureLights(flashMode: flash, videoTorch: torch)
        _ = m.handle(.ready, at: t(0), lights: lights)
    }

    mutating func send(_ input: CaptureInput, _ ms: Int64) -> [CaptureAction] {
        let out = m.handle(input, at: t(ms), lights: lights)
        for case .flashModeChanged(let mode) in out { lights.flashMode = mode }
        return out
    }
    mutating func g(_ e: GestureEvent, _ ms: Int64) -> [CaptureAction] { send(.gesture(e), ms) }
    mutating func press(_ p: Int64) -> [CaptureAction] { g(.pressed(at: t(p)), p) }
    mutating func tap(_ p: Int64, _ r: Int64) -> [CaptureAction] { g(.tap(start: t(p), end: t(r)), r) }
    mutating func holdStarted(_ p: Int64, _ at: Int64) -> [CaptureAction] {
        g(.holdStarted(pressedAt: t(p), at: t(at)), at)
    }
    mutating func hold(_ p: Int64, _ r: Int64) -> [CaptureAction] { g(.hold(start: t(p), end: t(r)), r) }

    /// A full tap → photo → saved cycle; returns the takePhoto action seen.
    mutating func photo(_ p: Int64, expect photoID: UInt64) -> [CaptureAction] {
        var all = press(p)
        all += tap(p, p + 200)
        all += send(.photoSaved(id: id(photoID), path: "/p"), p + 400)
        return all
    }
}

final class CaptureStateMachineTests: XCTestCase {
    // MARK: - Boot

    func testBootingKeepsTheFirstPressForTheFirstFrameAndRefusesTheRest() {
        var m = CaptureStateMachine(configuration: .init(stillMoment: .focused))
        XCTAssertEqual(m.state, .booting)
        XCTAssertEqual(m.handle(.gesture(.pressed(at: t(10))), at: t(10)), [], "a press from power-off waits for the first frame")
        XCTAssertEqual(m.handle(.gesture(.tap(start: t(10), end: t(100))), at: t(100)), [])
        XCTAssertEqual(m.handle(.gesture(.pressed(at: t(120))), at: t(120)), [.refused(.notReady, origin: press(120)), .led(.busyRefused)],
                       "one press waits; a second is refused")
        XCTAssertEqual(m.handle(.gesture(.tap(start: t(120), end: t(140))), at: t(140)), [], "the refused press's tap is ignored")
        XCTAssertEqual(m.handle(.command(.photo, rq(1)), at: t(150)), [.refused(.notReady, origin: .request(rq(1))), .led(.busyRefused)])
        // The first frame: the tap is a photo dated at it (no frame exists from before).
        XCTAssertEqual(m.handle(.ready, at: t(200)),
                       [.startAutofocus, .startSpeculativeClip(from: t(200)), .discardSpeculativeClip,
                        .takePhoto(id: id(1), origin: press(200), pressedAt: t(200), flash: false, moment: .focused), .led(.saving)])
        XCTAssertEqual(m.state, .takingPhoto(pressedAt: t(200)))
    }

    func testAPressHeldFromPowerOnIsAClipFromTheFirstFrameToItsRelease() {
        var m = CaptureStateMachine(configuration: .init(stillMoment: .focused))
        XCTAssertEqual(m.handle(.gesture(.pressed(at: t(10))), at: t(10)), [])
        XCTAssertEqual(m.handle(.gesture(.holdStarted(pressedAt: t(10), at: t(510))), at: t(510)), [])
        let ready = m.handle(.ready, at: t(800))
        XCTAssertTrue(ready.contains(.startRecording(id: id(1), origin: press(800), from: t(800), torch: false)), "\(ready)")
        XCTAssertEqual(m.state, .recording(from: t(800)))
        // The release names the press as the kernel dated it.
        let released = m.handle(.gesture(.hold(start: t(10), end: t(3000))), at: t(3000))
        XCTAssertTrue(released.contains(.stopRecording(id: id(1), at: t(3000))), "\(released)")
    }

    func testAPressStillHeldAtTheFirstFrameIsPressedThenAndItsTapIsAPhoto() {
        var m = CaptureStateMachine(configuration: .init(stillMoment: .focused))
        _ = m.handle(.gesture(.pressed(at: t(10))), at: t(10))
        _ = m.handle(.ready, at: t(200))
        XCTAssertEqual(m.state, .pressed(at: t(200)))
        let tapped = m.handle(.gesture(.tap(start: t(10), end: t(300))), at: t(300))
        XCTAssertTrue(tapped.contains(.takePhoto(id: id(1), origin: press(200), pressedAt: t(200), flash: false, moment: .focused)),
                      "\(tapped)")
    }

    func testAHoldReleasedBeforeTheFirstFrameIsAPhotoAndADoubleTapNothing() {
        var m = CaptureStateMachine(configuration: .init(stillMoment: .focused))
        _ = m.handle(.gesture(.pressed(at: t(10))), at: t(10))
        _ = m.handle(.gesture(.holdStarted(pressedAt: t(10), at: t(510))), at: t(510))
        _ = m.handle(.gesture(.hold(start: t(10), end: t(900))), at: t(900))
        let ready = m.handle(.ready, at: t(1000))
        XCTAssertTrue(ready.contains { if case .takePhoto = $0 { true } else { false } }, "\(ready)")
        XCTAssertFalse(ready.contains { if case .startRecording = $0 { true } else { false } }, "\(ready)")

        var d = CaptureStateMachine(configuration: .init(stillMoment: .focused))
        _ = d.handle(.gesture(.pressed(at: t(10))), at: t(10))
        _ = d.handle(.gesture(.tap(start: t(10), end: t(100))), at: t(100))
        _ = d.handle(.gesture(.pressed(at: t(200))), at: t(200))
        _ = d.handle(.gesture(.doubleTap(start: t(10), end: t(300))), at: t(300))
        XCTAssertEqual(d.handle(.ready, at: t(400)), [.led(.ready)], "a double tap changes the flash mode: no capture")
    }

    // MARK: - Tap and hold

    func testPressTriggersAutofocusAndKeepsFramesFromThePress() {
        var r = Rig()
        XCTAssertEqual(r.press(100), [.startAutofocus, .startSpeculativeClip(from: t(100))])
        XCTAssertEqual(r.m.state, .pressed(at: t(100)))
    }

    func testTapTakesAStillDatedAtThePressThenReturnsToIdle() {
        var r = Rig()
        _ = r.press(100)
        XCTAssertEqual(r.tap(100, 300), [.discardSpeculativeClip, .takePhoto(id: id(1), origin: .button(press: t(100)), pressedAt: t(100), flash: false, moment: .focused),
                                         .led(.saving)])
        XCTAssertEqual(r.m.state, .takingPhoto(pressedAt: t(100)))
        XCTAssertEqual(r.m.nextDeadline, t(300) + .seconds(20))
        XCTAssertEqual(r.send(.photoSaved(id: id(1), path: "/DCIM/100SHUTR/SHTR0001.JPG"), 900),
                       [.led(.ready), .led(.photoTaken)])
        XCTAssertEqual(r.m.state, .idle)
        XCTAssertNil(r.m.nextDeadline)
    }

    func testHoldRecordsAClipFromThePressNotFromHoldTime() {
        var r = Rig()
        _ = r.press(100)
        XCTAssertEqual(r.holdStarted(100, 1100), [.startRecording(id: id(1), origin: .button(press: t(100)), from: t(100), torch: false),
                                                  .led(.recording(since: t(100), maxDuration: max60))])
        XCTAssertEqual(r.m.state, .recording(from: t(100)))
        XCTAssertEqual(r.m.nextDeadline, t(100) + max60)
        XCTAssertEqual(r.hold(100, 5000), [.stopRecording(id: id(1), at: t(5000)), .led(.saving)])
        XCTAssertEqual(r.m.state, .finalising)
        XCTAssertEqual(r.send(.recordingFinalised(id: id(1), paths: ["/v.MP4"]), 5300),
                       [.led(.ready), .led(.photoTaken)])
        XCTAssertEqual(r.m.state, .idle)
    }

    func testRecordingIsCutAtTheMaxDurationEvenWithoutTheGestureEnd() {
        var r = Rig(.init(maxRecording: .seconds(10), stillMoment: .focused))
        _ = r.press(100)
        _ = r.holdStarted(100, 1100)
        XCTAssertEqual(r.send(.tick, 10_099), [], "1 ms before the max: still recording")
        XCTAssertEqual(r.send(.tick, 10_150), [.stopRecording(id: id(1), at: t(10_100)), .led(.saving)])
        XCTAssertEqual(r.m.state, .finalising)
        XCTAssertEqual(r.hold(100, 10_100), [], "the recognizer's own cut arrives later and is ignored")
        XCTAssertFalse(r.m.hasQueuedPress)
        _ = r.send(.recordingFinalised(id: id(1), paths: ["/v"]), 10_400)
        XCTAssertEqual(r.m.state, .idle)
    }

    func testHoldWhoseHoldStartedWasMissedStillRecordsTheWholeHold() {
        var r = Rig()
        _ = r.press(100)
        XCTAssertEqual(r.hold(100, 2500), [.startRecording(id: id(1), origin: .button(press: t(100)), from: t(100), torch: false),
                                           .stopRecording(id: id(1), at: t(2500)), .led(.saving)])
    }

    func testTapWithoutAReportedPressIsStillAPhoto() {
        var r = Rig()
        XCTAssertEqual(r.tap(100, 300), [.startAutofocus, .startSpeculativeClip(from: t(100)), .discardSpeculativeClip,
                                         .takePhoto(id: id(1), origin: .button(press: t(100)), pressedAt: t(100), flash: false, moment: .focused), .led(.saving)])
    }

    // MARK: - Busy

    func testAPressWhileSavingIsQueuedAndTakenWhenIdle() {
        var r = Rig()
        _ = r.press(100)
        _ = r.tap(100, 300)
        XCTAssertEqual(r.press(500), [.startSpeculativeClip(from: t(500))])
        XCTAssertTrue(r.m.hasQueuedPress)
        XCTAssertEqual(r.tap(500, 650), [])
        XCTAssertEqual(r.m.state, .takingPhoto(pressedAt: t(100)))
        XCTAssertEqual(r.send(.photoSaved(id: id(1), path: "/1"), 2000),
                       [.startAutofocus, .discardSpeculativeClip, .takePhoto(id: id(2), origin: .button(press: t(500)), pressedAt: t(500), flash: false, moment: .focused),
                        .led(.photoTaken)])
        XCTAssertEqual(r.m.state, .takingPhoto(pressedAt: t(500)))
        XCTAssertFalse(r.m.hasQueuedPress)
    }

    func testFurtherPressesWhileBusyAreRefusedWithTheBusySignalAndIgnored() {
        var r = Rig()
        _ = r.press(100)
        _ = r.tap(100, 300)
        _ = r.press(500)
        XCTAssertEqual(r.press(800), [.refused(.busy, origin: press(800)), .led(.busyRefused)])
        XCTAssertEqual(r.holdStarted(800, 1800), [], "a refused press never becomes a clip")
        XCTAssertEqual(r.hold(800, 2200), [])
        XCTAssertEqual(r.press(2500), [.refused(.busy, origin: press(2500)), .led(.busyRefused)])
        XCTAssertEqual(r.tap(2500, 2600), [])
        let after = r.send(.photoSaved(id: id(1), path: "/1"), 3000)
        XCTAssertEqual(after.filter { if case .takePhoto = $0 { return true }; return false }.count, 0,
                       "the queued press was still pending (never tapped): it becomes the current press")
        XCTAssertEqual(r.m.state, .pressed(at: t(500)))
        XCTAssertEqual(after, [.startAutofocus, .led(.ready), .led(.photoTaken)])
    }

    func testAQueuedPressStillHeldBecomesTheCurrentPress() {
        var r = Rig()
        _ = r.press(100)
        _ = r.tap(100, 300)
        _ = r.press(500)
        _ = r.send(.photoSaved(id: id(1), path: "/1"), 700)
        XCTAssertEqual(r.m.state, .pressed(at: t(500)))
        XCTAssertEqual(r.tap(500, 900), [.discardSpeculativeClip, .takePhoto(id: id(2), origin: .button(press: t(500)), pressedAt: t(500), flash: false, moment: .focused),
                                         .led(.saving)])
    }

    func testAQueuedHoldRecordsFromItsOwnPress() {
        var r = Rig()
        _ = r.press(100)
        _ = r.holdStarted(100, 1100)
        _ = r.hold(100, 3000)
        XCTAssertEqual(r.press(3200), [.startSpeculativeClip(from: t(3200))], "finalising: frames kept for this press")
        XCTAssertEqual(r.holdStarted(3200, 4200), [])
        XCTAssertEqual(r.send(.recordingFinalised(id: id(1), paths: ["/1"]), 4500),
                       [.startRecording(id: id(2), origin: .button(press: t(3200)), from: t(3200), torch: false),
                        .led(.recording(since: t(3200), maxDuration: max60)), .led(.photoTaken)])
        XCTAssertEqual(r.hold(3200, 8000), [.stopRecording(id: id(2), at: t(8000)), .led(.saving)])
    }

    func testAQueuedHoldReleasedWhileBusyBecomesAClipOfItsKeptFrames() {
        var r = Rig()
        _ = r.press(100)
        _ = r.tap(100, 300)
        _ = r.press(400)
        _ = r.holdStarted(400, 1400)
        _ = r.hold(400, 2000)
        XCTAssertEqual(r.send(.photoSaved(id: id(1), path: "/1"), 2500),
                       [.startRecording(id: id(2), origin: .button(press: t(400)), from: t(400), torch: false),
                        .stopRecording(id: id(2), at: t(2000)), .led(.photoTaken)])
        XCTAssertEqual(r.m.state, .finalising)
    }

    func testSecondPressDuringAPendingPressIsQueuedForTheDoubleTapCase() {
        var r = Rig()
        _ = r.press(100)
        XCTAssertEqual(r.press(400), [], "frames are already kept from 100")
        // The recognizer decided the first was a plain tap (gap too long for a double tap).
        XCTAssertEqual(r.tap(100, 250), [.startSpeculativeClip(from: t(400)), .takePhoto(id: id(1), origin: .button(press: t(100)), pressedAt: t(100), flash: false, moment: .focused),
                                         .led(.saving)],
                       "frames stay kept for the queued press, which may become a clip")
        _ = r.tap(400, 500)
        XCTAssertEqual(r.send(.photoSaved(id: id(1), path: "/1"), 900),
                       [.startAutofocus, .discardSpeculativeClip, .takePhoto(id: id(2), origin: .button(press: t(400)), pressedAt: t(400), flash: false, moment: .focused),
                        .led(.photoTaken)])
    }

    // MARK: - Commands

    func testCommandPhotoWhenIdleAndWhileBusy() {
        var r = Rig()
        XCTAssertEqual(r.send(.command(.photo, rq(1)), 100),
                       [.startAutofocus, .takePhoto(id: id(1), origin: .request(rq(1)), pressedAt: t(100), flash: false, moment: .focused), .led(.saving)])
        XCTAssertEqual(r.send(.command(.photo, rq(2)), 200), [], "queued")
        XCTAssertTrue(r.m.isPending(.request(rq(2))))
        XCTAssertEqual(r.send(.command(.photo, rq(3)), 300), [.refused(.busy, origin: .request(rq(3))), .led(.busyRefused)])
        XCTAssertEqual(r.send(.photoSaved(id: id(1), path: "/1"), 400),
                       [.startAutofocus, .discardSpeculativeClip, .takePhoto(id: id(2), origin: .request(rq(2)), pressedAt: t(200), flash: false, moment: .focused),
                        .led(.photoTaken)])
    }

    func testPhotoDuringARecordingIsASnapshotFromTheVideoStream() {
        var r = Rig()
        _ = r.press(100)
        _ = r.holdStarted(100, 1100)
        XCTAssertEqual(r.send(.command(.photo, rq(1)), 2000), [.takeVideoSnapshot(id: id(2), origin: .request(rq(1)), at: t(2000))])
        XCTAssertEqual(r.m.state, .recording(from: t(100)), "the clip is not cut")
        XCTAssertEqual(r.send(.photoSaved(id: id(2), path: "/s"), 2300), [.led(.photoTaken)])
        XCTAssertEqual(r.m.state, .recording(from: t(100)))
        // A failed snapshot with a transient error does not stop the clip either.
        _ = r.send(.command(.photo, rq(2)), 2500)
        let failed = CaptureError(.encoder, "JPEG encode failed")
        XCTAssertEqual(r.send(.photoFailed(id: id(3), failed), 2600),
                       [.failed(failed), .led(.errorOnce(.encoderError, times: 2))])
        XCTAssertEqual(r.m.state, .recording(from: t(100)))
    }

    func testCommandRecordingAndATapDuringIt() {
        var r = Rig()
        XCTAssertEqual(r.send(.command(.recordStart(stopAfter: nil), rq(1)), 100),
                       [.startRecording(id: id(1), origin: .request(rq(1)), from: t(100), torch: false),
                        .led(.recording(since: t(100), maxDuration: max60))])
        XCTAssertEqual(r.send(.command(.recordStart(stopAfter: nil), rq(2)), 200),
                       [.refused(.alreadyRecording, origin: .request(rq(2)))])
        XCTAssertEqual(r.press(500), [])
        XCTAssertEqual(r.tap(500, 600), [.takeVideoSnapshot(id: id(2), origin: .button(press: t(500)), at: t(500))])
        XCTAssertEqual(r.send(.command(.recordStop, rq(3)), 3000),
                       [.answers(.request(rq(3)), with: id(1)), .stopRecording(id: id(1), at: t(3000)), .led(.saving)])
        XCTAssertEqual(r.send(.command(.recordStop, rq(4)), 3100), [.refused(.notRecording, origin: .request(rq(4)))])
        // While the clip is finalised a start waits (the one queued request), encoding from now.
        XCTAssertEqual(r.send(.command(.recordStart(stopAfter: nil), rq(5)), 3200), [.startSpeculativeClip(from: t(3200))])
        XCTAssertEqual(r.send(.command(.photo, rq(6)), 3250), [.refused(.busy, origin: .request(rq(6))), .led(.busyRefused)])
        XCTAssertEqual(r.send(.recordingFinalised(id: id(1), paths: ["/1"]), 3300),
                       [.startRecording(id: id(3), origin: .request(rq(5)), from: t(3200), torch: false),
                        .led(.recording(since: t(3200), maxDuration: max60)), .led(.photoTaken)])
        // A command recording also stops at the max duration.
        XCTAssertEqual(r.send(.tick, 63_200), [.stopRecording(id: id(3), at: t(63_200)), .led(.saving)])
    }

    func testARequestAndAButtonPressAtTheSameInstantAreTwoRequests() {
        var r = Rig()
        _ = r.send(.command(.photo, rq(1)), 100)
        XCTAssertEqual(r.send(.command(.photo, rq(2)), 130), [], "queued")
        XCTAssertEqual(r.press(130), [.refused(.busy, origin: press(130)), .led(.busyRefused)],
                       "the button's press is not the request queued at the same instant")
        XCTAssertEqual(r.tap(130, 230), [])
        XCTAssertEqual(r.send(.photoSaved(id: id(1), path: "/1"), 400),
                       [.startAutofocus, .discardSpeculativeClip,
                        .takePhoto(id: id(2), origin: .request(rq(2)), pressedAt: t(130), flash: false, moment: .focused), .led(.photoTaken)])
    }

    func testAPressStaysPendingUntilTheMachineHasDealtWithIt() {
        var r = Rig(.init(stillMoment: .focused), flash: .off)
        _ = r.send(.command(.recordStart(stopAfter: nil), rq(1)), 100)
        XCTAssertFalse(r.m.isPending(.request(rq(1))), "started: answered by its capture")
        _ = r.press(500)
        XCTAssertTrue(r.m.isPending(press(500)), "a press during a command recording is not dealt with yet")
        XCTAssertEqual(r.tap(500, 600), [.takeVideoSnapshot(id: id(2), origin: press(500), at: t(500))])
        XCTAssertFalse(r.m.isPending(press(500)))
        _ = r.press(700)
        _ = r.hold(700, 2000)
        XCTAssertFalse(r.m.isPending(press(700)), "a hold during a command recording captures nothing and is done")
    }

    func testARemoteHoldEndsByItselfAndQueuesBehindABusyCamera() {
        var r = Rig()
        XCTAssertEqual(r.send(.command(.recordStart(stopAfter: .seconds(3)), rq(1)), 100),
                       [.startRecording(id: id(1), origin: .request(rq(1)), from: t(100), torch: false),
                        .led(.recording(since: t(100), maxDuration: max60))])
        XCTAssertEqual(r.m.nextDeadline, t(3100))
        XCTAssertEqual(r.send(.tick, 3100), [.stopRecording(id: id(1), at: t(3100)), .led(.saving)])
        // Queued behind the finalising clip: the clip still starts at the request and lasts 2 s.
        XCTAssertEqual(r.send(.command(.recordStart(stopAfter: .seconds(2)), rq(2)), 3200), [.startSpeculativeClip(from: t(3200))])
        XCTAssertEqual(r.send(.recordingFinalised(id: id(1), paths: ["/1"]), 3500),
                       [.startRecording(id: id(2), origin: .request(rq(2)), from: t(3200), torch: false),
                        .led(.recording(since: t(3200), maxDuration: max60)), .led(.photoTaken)])
        XCTAssertEqual(r.send(.tick, 5200), [.stopRecording(id: id(2), at: t(5200)), .led(.saving)])
    }

    // MARK: - Flash and torch

    func testDoubleTapCyclesTheFlashModeAndCapturesNothing() {
        var r = Rig()
        _ = r.press(100)
        _ = r.press(300)
        XCTAssertEqual(r.g(.doubleTap(start: t(100), end: t(400)), 400),
                       [.flashModeChanged(.auto), .flashLED(.mode(.auto)), .discardSpeculativeClip])
        XCTAssertEqual(r.m.state, .idle)
        XCTAssertFalse(r.m.hasQueuedPress)
        XCTAssertEqual(r.tap(100, 200), [], "the double tap's presses are spent")
        XCTAssertEqual(r.g(.doubleTap(start: t(1000), end: t(1300)), 1300),
                       [.flashModeChanged(.on), .flashLED(.mode(.on))])
        XCTAssertEqual(r.g(.doubleTap(start: t(2000), end: t(2300)), 2300),
                       [.flashModeChanged(.off), .flashLED(.mode(.off))])
        XCTAssertEqual(r.lights.flashMode, .off)
    }

    /// The machine keeps no flash mode: a double tap moves on from the mode it is
    /// given, and a mode set elsewhere (`shutterctl set`) is only shown.
    func testTheFlashModeIsTheOneGivenWithTheInput() {
        var m = CaptureStateMachine(configuration: .init(stillMoment: .focused))
        _ = m.handle(.ready, at: t(0), lights: CaptureLights(flashMode: .off))
        XCTAssertEqual(m.handle(.gesture(.doubleTap(start: t(100), end: t(400))), at: t(400),
                                lights: CaptureLights(flashMode: .on)),
                       [.flashModeChanged(.off), .flashLED(.mode(.off))], "on → off: from the given mode")
        XCTAssertEqual(m.handle(.flashModeSet(.auto), at: t(500), lights: CaptureLights(flashMode: .auto)),
                       [.flashLED(.mode(.auto))], "shown, not asked for again")
        _ = m.handle(.gesture(.pressed(at: t(600))), at: t(600), lights: CaptureLights(flashMode: .on))
        let tap = m.handle(.gesture(.tap(start: t(600), end: t(700))), at: t(700), lights: CaptureLights(flashMode: .on))
        XCTAssertTrue(tap.contains(.takePhoto(id: id(1), origin: press(600), pressedAt: t(600), flash: true, moment: .focused)),
                      "\(tap)")
    }

    func testFlashFollowsTheModeAndTheScene() {
        var r = Rig(flash: .auto)
        _ = r.send(.sceneMetered(FrameMetadata(lux: 5)), 50)
        _ = r.press(100)
        XCTAssertTrue(r.tap(100, 200).contains(.takePhoto(id: id(1), origin: .button(press: t(100)), pressedAt: t(100), flash: true, moment: .focused)))
        _ = r.send(.photoSaved(id: id(1), path: "/1"), 300)
        XCTAssertEqual(r.send(.sceneMetered(FrameMetadata(lux: 800)), 350), [])
        _ = r.press(400)
        XCTAssertTrue(r.tap(400, 500).contains(.takePhoto(id: id(2), origin: .button(press: t(400)), pressedAt: t(400), flash: false, moment: .focused)))
        var on = Rig(flash: .on)
        _ = on.press(100)
        XCTAssertTrue(on.tap(100, 200).contains(.takePhoto(id: id(1), origin: .button(press: t(100)), pressedAt: t(100), flash: true, moment: .focused)))
    }

    func testTorchLightsDuringClipsExactlyWhenVideoTorchIsOn() {
        // `video.torch` alone decides: the flash mode is for stills.
        var r = Rig(flash: .off, torch: true)
        _ = r.press(100)
        XCTAssertEqual(r.holdStarted(100, 1100), [.startRecording(id: id(1), origin: .button(press: t(100)), from: t(100), torch: true),
                                                  .flashLED(.torch),
                                                  .led(.recording(since: t(100), maxDuration: max60))])
        XCTAssertEqual(r.hold(100, 3000), [.stopRecording(id: id(1), at: t(3000)), .flashLED(.off), .led(.saving)])
        var flashOn = Rig(flash: .on, torch: false)
        _ = flashOn.press(100)
        let actions = flashOn.holdStarted(100, 1100)
        XCTAssertFalse(actions.contains(.flashLED(.torch)), "flash.mode on does not light the torch for a clip")
        XCTAssertTrue(actions.contains(.startRecording(id: id(1), origin: .button(press: t(100)), from: t(100), torch: false)))
    }

    // MARK: - Errors: every one leads to a defined state, and a later tap works

    func testLostCameraRefusesPressesUntilRestored() {
        var r = Rig()
        XCTAssertEqual(r.send(.fault(.cameraLost), 100), [.led(.error(.noCamera))])
        XCTAssertEqual(r.m.state, .cameraUnavailable)
        XCTAssertEqual(r.press(200), [.refused(.fault(.noCamera), origin: press(200)), .led(.errorOnce(.noCamera, times: 1))])
        XCTAssertEqual(r.tap(200, 300), [])
        XCTAssertEqual(r.send(.command(.photo, rq(1)), 350), [.refused(.fault(.noCamera), origin: .request(rq(1))), .led(.errorOnce(.noCamera, times: 1))])
        XCTAssertEqual(r.send(.cameraRestored, 400), [.led(.ready)])
        XCTAssertTrue(r.photo(500, expect: 1).contains(.takePhoto(id: id(1), origin: .button(press: t(500)), pressedAt: t(500), flash: false, moment: .focused)))
    }

    func testStorageFaultWhilePressedDropsThePressAndAsksForAProbe() {
        var r = Rig()
        _ = r.press(100)
        XCTAssertEqual(r.send(.fault(.storageFull), 150),
                       [.discardSpeculativeClip, .refused(.fault(.storageFull), origin: press(100)), .led(.error(.storageFull))])
        XCTAssertEqual(r.m.state, .storageUnavailable(.storageFull))
        XCTAssertEqual(r.tap(100, 300), [])
        XCTAssertEqual(r.press(400), [.refused(.fault(.storageFull), origin: press(400)), .probeStorage,
                                      .led(.errorOnce(.storageFull, times: 1))])
        XCTAssertEqual(r.send(.storageRestored, 500), [.led(.ready)])
        XCTAssertTrue(r.photo(600, expect: 1).contains(.takePhoto(id: id(1), origin: .button(press: t(600)), pressedAt: t(600), flash: false, moment: .focused)))
    }

    func testEveryErrorInEveryStateRecoversOnceTheFaultClears() {
        struct Case {
            let name: String
            /// Brings the machine into a state; returns the capture id in flight (if any).
            let setup: (inout Rig) -> UInt64?
        }
        let setups: [Case] = [
            Case(name: "idle") { _ in nil },
            Case(name: "pressed") { r in _ = r.press(100); return nil },
            Case(name: "photo") { r in _ = r.press(100); _ = r.tap(100, 200); return 1 },
            Case(name: "recording") { r in _ = r.press(100); _ = r.holdStarted(100, 1100); return 1 },
            Case(name: "finalising") { r in
                _ = r.press(100); _ = r.holdStarted(100, 1100); _ = r.hold(100, 1500); return 1
            },
            Case(name: "busy+queued") { r in
                _ = r.press(100); _ = r.tap(100, 200); _ = r.press(300); _ = r.tap(300, 400); return 1
            },
        ]
        struct Failure {
            let name: String
            let input: (UInt64?) -> [CaptureInput]
            let clear: CaptureInput?
        }
        let failures: [Failure] = [
            Failure(name: "cameraLost", input: { _ in [.fault(.cameraLost)] }, clear: .cameraRestored),
            Failure(name: "storageFull", input: { _ in [.fault(.storageFull)] }, clear: .storageRestored),
            Failure(name: "storageError", input: { _ in [.fault(.storageError)] }, clear: .storageRestored),
            Failure(name: "encoderError", input: { _ in [.fault(.encoderError)] }, clear: nil),
            Failure(name: "role camera error", input: { id in
                id.map { [.photoFailed(id: CaptureID($0), CaptureError(.camera, "x")),
                          .recordingFailed(id: CaptureID($0), CaptureError(.camera, "x"))] } ?? []
            }, clear: nil),
            Failure(name: "role storage full", input: { id in
                id.map { [.photoFailed(id: CaptureID($0), CaptureError(.storageFull, "x")),
                          .recordingFailed(id: CaptureID($0), CaptureError(.storageFull, "x"))] } ?? []
            }, clear: .storageRestored),
            Failure(name: "role storage error", input: { id in
                id.map { [.recordingFailed(id: CaptureID($0), CaptureError(.storageError, "x")),
                          .photoFailed(id: CaptureID($0), CaptureError(.storageError, "x"))] } ?? []
            }, clear: .storageRestored),
            Failure(name: "role encoder error", input: { id in
                id.map { [.recordingFailed(id: CaptureID($0), CaptureError(.encoder, "x")),
                          .photoFailed(id: CaptureID($0), CaptureError(.encoder, "x"))] } ?? []
            }, clear: nil),
            Failure(name: "no answer (timeouts)", input: { _ in [.tick] }, clear: nil),
        ]
        for setup in setups {
            for failure in failures {
                let label = "\(setup.name) / \(failure.name)"
                var r = Rig(.init(maxRecording: .seconds(60), photoTimeout: .seconds(5), finaliseTimeout: .seconds(5),
                                  stillMoment: .focused))
                let inFlight = setup.setup(&r)
                for input in failure.input(inFlight) { _ = r.send(input, 2000) }
                // Time passes, the roles answer whatever is still open (a fault may
                // have stopped a recording: its finalisation arrives), ticks fire.
                _ = r.send(.tick, 70_000)
                for n in 1...4 {
                    _ = r.send(.recordingFinalised(id: id(UInt64(n)), paths: []), 70_100)
                    _ = r.send(.photoSaved(id: id(UInt64(n)), path: "/x"), 70_100)
                }
                _ = r.send(.tick, 140_000)
                for n in 1...4 {
                    _ = r.send(.recordingFinalised(id: id(UInt64(n)), paths: []), 140_100)
                    _ = r.send(.photoSaved(id: id(UInt64(n)), path: "/x"), 140_100)
                }
                if let clear = failure.clear { _ = r.send(clear, 150_000) }
                XCTAssertEqual(r.m.state, .idle, "\(label): idle once the fault clears")
                XCTAssertTrue(r.m.activeFaults.filter(\.isLatched).isEmpty, label)
                _ = r.press(200_000)
                let tap = r.tap(200_000, 200_100)
                XCTAssertTrue(tap.contains { if case .takePhoto(_, _, t(200_000), _, _) = $0 { return true }; return false },
                              "\(label): a later tap takes a photo, got \(tap)")
            }
        }
    }

    func testAFaultDuringARecordingStopsAndKeepsTheClip() {
        var r = Rig(torch: true)
        _ = r.press(100)
        _ = r.holdStarted(100, 1100)
        XCTAssertEqual(r.send(.fault(.storageFull), 4000),
                       [.stopRecording(id: id(1), at: t(4000)), .flashLED(.off), .led(.saving)])
        XCTAssertEqual(r.hold(100, 6000), [], "the release after the stop changes nothing")
        XCTAssertEqual(r.send(.recordingFinalised(id: id(1), paths: ["/1"]), 6100),
                       [.led(.error(.storageFull)), .led(.photoTaken)])
        XCTAssertEqual(r.m.state, .storageUnavailable(.storageFull))
    }

    func testEncoderFaultStopsTheClipShowsCodeFiveAndTheNextHoldWorks() {
        var r = Rig()
        _ = r.press(100)
        _ = r.holdStarted(100, 1100)
        XCTAssertEqual(r.send(.fault(.encoderError), 3000),
                       [.stopRecording(id: id(1), at: t(3000)), .led(.saving), .led(.errorOnce(.encoderError, times: 2))])
        let err = CaptureError(.encoder, "muxer failed")
        XCTAssertEqual(r.send(.recordingFailed(id: id(1), err), 3100),
                       [.failed(err), .led(.ready), .led(.errorOnce(.encoderError, times: 2))])
        XCTAssertEqual(r.m.state, .idle)
        _ = r.press(5000)
        XCTAssertTrue(r.holdStarted(5000, 6000).contains(.startRecording(id: id(2), origin: .button(press: t(5000)), from: t(5000), torch: false)))
    }

    func testPhotoFailuresLatchOnlyStorageFaults() {
        var r = Rig()
        _ = r.press(100)
        _ = r.tap(100, 200)
        let cam = CaptureError(.camera, "capture request timed out")
        XCTAssertEqual(r.send(.photoFailed(id: id(1), cam), 300),
                       [.failed(cam), .led(.ready), .led(.errorOnce(.noCamera, times: 2))])
        XCTAssertEqual(r.m.state, .idle, "a camera error of one still is not latched")
        _ = r.press(400)
        _ = r.tap(400, 500)
        let full = CaptureError(.storageFull, "no space left on device")
        XCTAssertEqual(r.send(.photoFailed(id: id(2), full), 600), [.failed(full), .led(.error(.storageFull))])
        XCTAssertEqual(r.m.state, .storageUnavailable(.storageFull))
    }

    func testATimedOutStillDoesNotWedgeAndItsLateAnswerIsNotMistakenForTheNextOne() {
        var r = Rig(.init(photoTimeout: .seconds(5), stillMoment: .focused))
        _ = r.press(100)
        _ = r.tap(100, 200)
        XCTAssertEqual(r.send(.tick, 5199), [])
        let out = r.send(.tick, 5200)
        XCTAssertEqual(out.count, 3)
        guard case .failed(let e) = out[0] else { return XCTFail("\(out)") }
        XCTAssertEqual(e.code, .camera)
        XCTAssertEqual(Array(out[1...]), [.led(.ready), .led(.errorOnce(.noCamera, times: 2))])
        _ = r.press(6000)
        _ = r.tap(6000, 6100)
        XCTAssertEqual(r.send(.photoSaved(id: id(1), path: "/late"), 6200), [.led(.photoTaken)])
        XCTAssertEqual(r.m.state, .takingPhoto(pressedAt: t(6000)), "the late answer belongs to photo #1")
        _ = r.send(.photoSaved(id: id(2), path: "/2"), 6300)
        XCTAssertEqual(r.m.state, .idle)
    }

    func testAFinaliseThatNeverAnswersTimesOut() {
        var r = Rig(.init(finaliseTimeout: .seconds(5), stillMoment: .focused))
        _ = r.press(100)
        _ = r.holdStarted(100, 1100)
        _ = r.hold(100, 2000)
        XCTAssertEqual(r.m.nextDeadline, t(7000))
        let out = r.send(.tick, 7000)
        guard case .failed(let e) = out.first else { return XCTFail("\(out)") }
        XCTAssertEqual(e.code, .encoder)
        XCTAssertEqual(r.m.state, .idle)
    }

    func testAQueuedPressMeetingAFaultIsRefusedNotLost() {
        var r = Rig()
        _ = r.press(100)
        _ = r.tap(100, 200)
        _ = r.press(300)
        _ = r.tap(300, 400)
        let full = CaptureError(.storageFull, "ENOSPC")
        XCTAssertEqual(r.send(.photoFailed(id: id(1), full), 500),
                       [.failed(full), .refused(.fault(.storageFull), origin: press(300)), .probeStorage, .discardSpeculativeClip,
                        .led(.error(.storageFull)), .led(.errorOnce(.storageFull, times: 1))])
    }

    // MARK: - Shutdown

    func testShutdownCountdownDropsTheHeldPressAndACancelReturnsToReady() {
        var r = Rig()
        _ = r.press(2000)
        XCTAssertEqual(r.g(.shutdownCountdown(start: t(100), deadline: t(6000)), 3000),
                       [.discardSpeculativeClip, .led(.shutdownCountdown(start: t(3000), deadline: t(6000)))])
        XCTAssertEqual(r.m.state, .shutdownCountdown(deadline: t(6000)))
        XCTAssertEqual(r.g(.shutdownCancelled(at: t(4000)), 4000), [.led(.ready)])
        XCTAssertEqual(r.m.state, .idle)
        XCTAssertEqual(r.hold(2000, 4000), [], "the cancelled shutdown press is not a clip")
    }

    func testShutdownFinishesTheCapturesInFlightThenPowersOff() {
        var r = Rig()
        // First steps of the sequence: two taps. The first is saving, the second queued.
        _ = r.press(100); _ = r.tap(100, 150)
        _ = r.press(300); _ = r.tap(300, 350)
        _ = r.press(500)   // refused: the queue is full
        _ = r.press(700)   // the final, held press
        _ = r.g(.shutdownCountdown(start: t(100), deadline: t(4700)), 1700)
        XCTAssertEqual(r.g(.shutdown(start: t(100), end: t(4700)), 4700), [.led(.saving)])
        XCTAssertEqual(r.m.state, .shuttingDown)
        XCTAssertEqual(r.press(5000), [.refused(.shuttingDown, origin: press(5000)), .led(.busyRefused)])
        let next = r.send(.photoSaved(id: id(1), path: "/1"), 5100)
        XCTAssertEqual(next, [.startAutofocus, .discardSpeculativeClip, .takePhoto(id: id(2), origin: .button(press: t(300)), pressedAt: t(300), flash: false, moment: .focused),
                              .led(.photoTaken)], "the sequence's second tap is kept")
        XCTAssertEqual(r.send(.photoSaved(id: id(2), path: "/2"), 5300), [.led(.off), .led(.photoTaken), .powerOff])
        XCTAssertEqual(r.m.state, .poweredOff)
        XCTAssertEqual(r.press(6000), [], "nothing after power off")
    }

    func testShutdownDuringARecordingStopsAndKeepsTheClip() {
        var r = Rig()
        _ = r.send(.command(.recordStart(stopAfter: nil), rq(1)), 100)
        XCTAssertEqual(r.g(.shutdown(start: t(1000), end: t(5000)), 5000),
                       [.stopRecording(id: id(1), at: t(5000)), .led(.saving)])
        XCTAssertEqual(r.send(.recordingFinalised(id: id(1), paths: ["/1"]), 5200),
                       [.led(.off), .led(.photoTaken), .powerOff])
    }
}

extension CaptureStateMachineTests {
    /// The recognizer's real order for the shutdown press: holdStarted, then the
    /// countdown. The clip runs through the countdown and is kept.
    func testShutdownHoldKeepsRecordingThroughTheCountdownThenPowersOff() {
        var r = Rig()
        _ = r.press(700)
        XCTAssertEqual(r.g(.holdStarted(pressedAt: t(700), at: t(1700)), 1700).first,
                       .startRecording(id: id(1), origin: .button(press: t(700)), from: t(700), torch: false))
        let countdown = r.g(.shutdownCountdown(start: t(700), deadline: t(4700)), 1700)
        XCTAssertFalse(countdown.contains(.stopRecording(id: id(1), at: t(1700))), "the clip is not cut by the countdown")
        XCTAssertEqual(r.g(.hold(start: t(700), end: t(4700)), 4700).first, .stopRecording(id: id(1), at: t(4700)))
        _ = r.g(.shutdown(start: t(100), end: t(4700)), 4700)
        XCTAssertEqual(r.m.state, .shuttingDown)
        XCTAssertEqual(r.send(.recordingFinalised(id: id(1), paths: ["/1"]), 5000).last, .powerOff)
    }
}

extension CaptureStateMachineTests {
    /// No camera at boot: the LED shows code 2 while the service waits for one.
    func testBootingWithoutACameraShowsItsCodeThenReady() {
        var m = CaptureStateMachine(configuration: .init(stillMoment: .focused))
        XCTAssertEqual(m.handle(.fault(.cameraLost), at: t(10)), [.led(.error(.noCamera))])
        XCTAssertEqual(m.handle(.cameraRestored, at: t(20)), [.led(.booting)])
        XCTAssertEqual(m.handle(.ready, at: t(30)), [.led(.ready)])
    }
}

final class CaptureStateMachinePressTimeoutTests: XCTestCase {
    func testAPressThatNeverBecomesATapOrHoldIsDroppedAtItsDeadline() {
        var r = Rig(.init(pressTimeout: .seconds(10), stillMoment: .focused))
        _ = r.press(100)
        XCTAssertEqual(r.m.nextDeadline, t(10_100))
        XCTAssertEqual(r.send(.tick, 10_099), [])
        XCTAssertEqual(r.send(.tick, 10_100), [.discardSpeculativeClip])
        XCTAssertEqual(r.m.state, .idle)
        XCTAssertEqual(r.tap(100, 10_200), [], "a straggling event of the dropped press is ignored")
    }
}
