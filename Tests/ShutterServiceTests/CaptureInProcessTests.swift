// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterMedia
import XCTest
import ShutterCore
import ShutterSim
@testable import ShutterService

/// Capture semantics (issue 19 item 5), once end-to-end tests of the real shutterd
/// on the wall clock: the same configuration files, the same requests, the same
/// checks, now on the whole service in this process with the simulated camera and
/// microphone on the manual clock (InProcessRig). libjpeg-turbo and FFmpeg run for real.
final class CaptureInProcessTests: XCTestCase {
    func testTapGivesOneJPEGAtTheStillSizeWithEXIF() async throws {
        let r = try await InProcessRig.start(self, json: #"{"still": {"moment": "focused"}}"#)
        let reply = try await r.ask(ControlRequest(cmd: "tap"))
        XCTAssertTrue(reply.ok, "\(reply)")
        let files = reply.files ?? []
        XCTAssertEqual(files.count, 1)
        XCTAssertEqual(r.files("JPG"), files, "exactly one photo on the card")
        XCTAssertEqual(r.files("MP4"), [], "a tap leaves no clip")
        let path = try XCTUnwrap(files.first)
        XCTAssertTrue(path.hasSuffix("DCIM/100SHUTR/SHTR0001.JPG"), path)
        let (_, dims, _) = try runTool("ffprobe", ["-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0", path])
        XCTAssertEqual(dims.trimmingCharacters(in: .whitespacesAndNewlines), "4608,2592")
        let (_, exif, _) = try runTool("exiftool", ["-s", "-Make", "-Model", "-ExposureTime", "-ISO", "-ExifImageWidth", path])
        XCTAssertTrue(exif.contains("Make") && exif.contains("Shutter"), exif)
        XCTAssertTrue(exif.contains("Simulated camera"), exif)
        XCTAssertTrue(exif.contains("ExposureTime"), exif)
        XCTAssertTrue(exif.contains("ExifImageWidth                  : 4608"), exif)
        // No temporary clip left behind by the speculative recording of the press.
        try await r.advance(until: "the speculative clip gone") { (try? r.litter()) == [] }
        XCTAssertEqual(try r.litter(), [])
    }

    /// The finish (fragmented → regular MP4) runs after the capture machine is idle: a tap
    /// right after a hold's release is taken at its press, and the clip still ends regular.
    func testATapRightAfterAHoldsReleaseIsTakenAtItsPress() async throws {
        let r = try await InProcessRig.start(self)
        let button = r.board.button
        button.set(pressed: true)
        try await r.advance(until: "recording") { await r.status().state == "recording" }
        await r.advance(by: .milliseconds(500))
        button.set(pressed: false)
        await r.advance(by: .milliseconds(40))
        button.set(pressed: true)   // the tap, 40 ms after the release
        await r.advance(by: .milliseconds(150))
        button.set(pressed: false)
        try await r.advance(until: "the clip and the photo") {
            let c = await r.status().counters
            return c.clips == 1 && c.photos == 1
        }
        let clip = try XCTUnwrap(r.files("MP4").first)
        try await r.advance(until: "the clip finished") { (try? RegularMP4.isFragmented(clip)) == false }
        XCTAssertEqual(r.files("JPG").count, 1)
        let status = await r.status()
        let last = try XCTUnwrap(status.lastPhoto)
        print("tap after a hold's release: moment \(last.moment), press to exposure \(last.pressToExposureMs) ms")
        XCTAssertEqual(last.moment, "press")
        XCTAssertLessThanOrEqual(abs(last.pressToExposureMs), 34, "the frame exposed at the press (one frame period)")
    }

    func testHoldGivesAClipOfThatLengthFromThePressWithVideoAndAudio() async throws {
        let r = try await InProcessRig.start(self)
        let reply = try await r.ask(ControlRequest(cmd: "hold", seconds: 3))
        XCTAssertTrue(reply.ok, "\(reply)")
        let files = reply.files ?? []
        XCTAssertEqual(files.count, 1)
        let path = try XCTUnwrap(files.first)
        XCTAssertTrue(path.hasSuffix(".MP4"))
        let p = try probe(path)
        XCTAssertEqual(p.streams["video"]?.codec, "h264")
        XCTAssertEqual(p.streams["audio"]?.codec, "aac")
        XCTAssertEqual(p.format, 3.0, accuracy: 0.2, "hold 3 gives 3 s ± 0.2 s")
        XCTAssertEqual(p.streams["audio"]?.duration ?? 0, 3.0, accuracy: 0.2)
        let (ok, err) = try decodesCleanly(path)
        XCTAssertTrue(ok, err)
        let offset = try XCTUnwrap(reply.clipStartOffsetMs)
        XCTAssertLessThanOrEqual(offset, 0, "the clip starts at or before the press")
        XCTAssertEqual(r.files("JPG"), [], "a hold takes no photo")
    }

    func testWithoutAMicrophoneAClipHasVideoOnly() async throws {
        let r = try await InProcessRig.start(self, json: #"{"audio": {"enabled": false}}"#)
        let reply = try await r.ask(ControlRequest(cmd: "hold", seconds: 1.5))
        XCTAssertTrue(reply.ok, "\(reply)")
        let p = try probe(try XCTUnwrap(reply.files?.first))
        XCTAssertEqual(p.streams["video"]?.codec, "h264")
        XCTAssertNil(p.streams["audio"], "no empty audio track")
    }

    func testTapDuringARecordingIsASnapshotAndTheClipIsKept() async throws {
        let r = try await InProcessRig.start(self)
        let startedAt = r.clock.now()
        let start = try await r.ask(ControlRequest(cmd: "record", action: "start"))
        XCTAssertTrue(start.ok, "\(start)")
        try await r.wait(for: "recording")
        let reply = try await r.ask(ControlRequest(cmd: "tap"))
        XCTAssertTrue(reply.ok, "\(reply)")
        let photo = try XCTUnwrap(reply.files?.first)
        let (_, dims, _) = try runTool("ffprobe", ["-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0", photo])
        XCTAssertEqual(dims.trimmingCharacters(in: .whitespacesAndNewlines), "1920,1080", "a still from the video stream")
        // On the wall clock the tap itself took the clip past 0.8 s; here the clock says how long.
        await r.advance(by: .milliseconds(900))
        let stoppedAt = r.clock.now()
        let stop = try await r.ask(ControlRequest(cmd: "record", action: "stop"))
        XCTAssertTrue(stop.ok, "\(stop)")
        let clip = try XCTUnwrap(stop.files?.first)
        let length = try probe(clip).format
        XCTAssertGreaterThan(length, 0.8, "the clip was not cut by the snapshot")
        let asked = Double((stoppedAt - startedAt).nanoseconds) / 1e9
        XCTAssertEqual(length, asked, accuracy: 0.1, "from the start to the stop")
    }

    func testPressesWhileAStillIsSavingAreQueuedOrRefusedNeverLost() async throws {
        let r = try await InProcessRig.start(self, json: #"{"shutdown": {"taps": 0}}"#)
        // A button tap and two remote taps at once: the first still is saving when
        // the others come; one waits, the next is refused, each is told which.
        let press = try await r.ask(ControlRequest(cmd: "press"))
        XCTAssertTrue(press.ok, "\(press)")
        await r.advance(by: .milliseconds(30))
        let taps = [r.send(ControlRequest(cmd: "tap"))]
        await r.advance(by: .milliseconds(30))
        let more = taps + [r.send(ControlRequest(cmd: "tap"))]
        await r.advance(by: .milliseconds(40))
        let release = r.send(ControlRequest(cmd: "release"))
        try await r.advance(until: "every answer") { release.reply != nil && more.allSatisfy { $0.reply != nil } }
        let replies = ([release] + more).map { $0.reply! }
        let photos = replies.flatMap { $0.files ?? [] }
        let refused = replies.filter { !$0.ok }
        XCTAssertGreaterThanOrEqual(photos.count, 2, "the first and the queued request both give photos: \(replies)")
        XCTAssertEqual(photos.count + refused.count, 3, "every request is a photo or a refusal: \(replies)")
        for x in refused { XCTAssertTrue(x.error?.hasPrefix("busy: ") ?? false, x.error ?? "") }
        XCTAssertEqual(Set(r.files("JPG") + r.files("MP4")), Set(photos),
                       "the files on the card are exactly the ones the replies name: \(replies)")
    }

    func testAnEmptyClipLeftByACrashIsRemovedAndItsNumberNotReused() async throws {
        let dir = try DaemonHarness.makeTempDir()
        let dcim = dir + "/data/DCIM/100SHUTR"
        try FileManager.default.createDirectory(atPath: dcim, withIntermediateDirectories: true)
        // A crash right after the storage reserved SHTR0005.MP4: the counter (written
        // ahead) already says 6, the file is empty.
        XCTAssertTrue(FileManager.default.createFile(atPath: dcim + "/SHTR0005.MP4", contents: Data()))
        try "next 100SHUTR/SHTR0006\n".write(toFile: dir + "/data/.shutter-counter", atomically: true, encoding: .utf8)
        let r = try await InProcessRig.start(self, dir: dir)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dcim + "/SHTR0005.MP4"))
        let reply = try await r.ask(ControlRequest(cmd: "tap"))
        XCTAssertTrue(reply.ok, "\(reply)")
        XCTAssertTrue((reply.files?.first ?? "").hasSuffix("SHTR0006.JPG"), "\(reply)")
    }

    func testCameraStallIsRestartedWithBackoffShownOnTheLEDAndRecovers() async throws {
        let r = try await InProcessRig.start(
            self, json: #"{"watchdog": {"frameTimeoutMs": 300, "restartBackoffMs": 200, "maxRestarts": 50}}"#)
        let fault = try await r.ask(ControlRequest(cmd: "sim", fault: "stall"))
        XCTAssertTrue(fault.ok)
        try await r.wait(for: "camera-unavailable", limit: .seconds(15))
        try await r.advance(until: "two restarts", limit: .seconds(15)) { await r.status().counters.cameraRestarts >= 2 }
        let leds = await r.status().leds
        XCTAssertEqual(leds["status"]?.pattern, "error", "the status LED blinks the no-camera code")
        let refused = try await r.ask(ControlRequest(cmd: "tap"))
        XCTAssertFalse(refused.ok, "no photo without a camera")
        let none = try await r.ask(ControlRequest(cmd: "sim", fault: "none"))
        XCTAssertTrue(none.ok)
        try await r.wait(for: "idle", limit: .seconds(20))
        let reply = try await r.ask(ControlRequest(cmd: "tap"))
        XCTAssertTrue(reply.ok, "\(reply)")
        XCTAssertEqual(reply.files?.count, 1)
    }

    func testWatchdogGivesUpAfterTheConfiguredRestarts() async throws {
        let r = try await InProcessRig.start(
            self, json: #"{"watchdog": {"frameTimeoutMs": 200, "restartBackoffMs": 100, "maxRestarts": 2}}"#)
        let fault = try await r.ask(ControlRequest(cmd: "sim", fault: "stall"))
        XCTAssertTrue(fault.ok)
        let code = try await r.exitCode(limit: .seconds(60))
        XCTAssertNotEqual(code, 0, "shutterd exits so systemd restarts it")
        XCTAssertTrue(r.log.text.contains("giving up"), r.log.text)
    }

    /// Issue 11: a setting changed through the control protocol holds across a
    /// restart of the service (the state file) until `reset` returns it to the
    /// config file's value.
    func testASettingSurvivesARestartUntilReset() async throws {
        let json = #"{"camera": {"exposure": {"ev": 0.5}}}"#
        let first = try await InProcessRig.start(self, json: json)
        let set = try await first.set("camera.exposure.ev", "2")
        XCTAssertTrue(set.ok, "\(set)")
        XCTAssertEqual(set.value, .double(2))
        let got = try await first.ask("get", "camera.exposure.ev")
        XCTAssertEqual(got.value, .double(2))
        XCTAssertEqual(got.source, "runtime")
        XCTAssertEqual(got.effective, .double(2), "the running camera has it")
        let code = try await first.stop()
        XCTAssertEqual(code, 0)

        let d = try await InProcessRig.start(self, json: json, dir: first.dir)
        let again = try await d.ask("get", "camera.exposure.ev")
        XCTAssertEqual(again.value, .double(2), "remembered across the restart")
        XCTAssertEqual(again.source, "runtime")
        let asked = await d.status().camera.asked
        XCTAssertEqual(asked.exposure.ev, 2, "the camera started with it")

        let reset = try await d.ask("reset", "camera.exposure.ev")
        XCTAssertTrue(reset.ok, "\(reset)")
        let after = try await d.ask("get", "camera.exposure.ev")
        XCTAssertEqual(after.value, .double(0.5), "the config file's value")
        XCTAssertEqual(after.source, "config")

        let bad = try await d.set("camera.exposure.ev", "9")
        XCTAssertFalse(bad.ok, "a bad value is refused")
    }
}

/// The service's supervisor, as the hooks systemd's notifier takes: pings on the
/// manual clock, and the shutdown gesture with power-off replaced by a recorded call.
final class SupervisorInProcessTests: XCTestCase {
    /// A clip longer than the encoder deadline (5 s) is healthy: pings go on.
    func testWatchdogPingsContinueThroughALongRecording() async throws {
        let d = try await InProcessRig.start(self)
        let press = try await d.ask(ControlRequest(cmd: "press"))
        XCTAssertTrue(press.ok)
        try await d.wait(for: "recording", limit: .seconds(10))
        await d.advance(by: .seconds(6))
        let from = d.clock.now()
        await d.advance(by: .seconds(2))
        let state = await d.status().state
        XCTAssertEqual(state, "recording")
        let pings = d.told.lines(containing: "WATCHDOG=1").filter { $0.0 > from }
        XCTAssertGreaterThanOrEqual(pings.count, 2, "still pinging 6-8 s into a clip")
        let release = try await d.ask(ControlRequest(cmd: "release"))
        XCTAssertTrue(release.ok, "\(release)")
        try await d.advance(until: "clip", limit: .seconds(20)) { await d.status().counters.clips == 1 }
        let errors = await d.status().counters.errors
        XCTAssertEqual(errors, 0, d.log.text)
        XCTAssertGreaterThan(try probe(d.files("MP4")[0]).format, 8.0, "the clip ran to the release")
    }

    /// The shutdown gesture (three taps, then a hold through the countdown) while
    /// the hold records: the clip is finalised, then power off is asked for once.
    func testShutdownFinalisesTheRunningClipThenAsksForPowerOffExactlyOnce() async throws {
        let calls = PowerOffLog()
        let dir = try DaemonHarness.makeTempDir()
        // Each tap's photo is saved before the next tap (no mode switch, a wide gap),
        // so none waits or is refused by the request rule.
        let json = #"{"video": {"width": 640, "height": 480}, "still": {"width": 640, "height": 480}, "#
            + #""shutdown": {"countdownMs": 1500, "gapMs": 1000}, "sim": {"modeSwitchMs": 0}}"#
        let d = try await InProcessRig.start(self, json: json, dir: dir, powerOff: { calls.record(dir + "/data") })
        let button = d.board.button
        for n in 1...3 {
            button.press()
            await d.advance(by: .milliseconds(80))
            button.release()
            // Saved before the next tap, and within the gesture's gap (the clock waits for
            // the encode and the write at every step, however loaded the machine).
            try await d.advance(until: "photo \(n) saved", limit: .milliseconds(900)) {
                await d.status().counters.photos == n
            }
        }
        button.press()
        // holdMs (1 s) + countdown (1.5 s), then a little for the clip to finalise.
        let code = try await d.exitCode(limit: .seconds(20))
        button.release()
        XCTAssertEqual(code, 0, "the service ends after asking for power off")
        XCTAssertEqual(calls.count, 1, "power off asked for exactly once")
        let clips = calls.clipsAtCall
        XCTAssertEqual(clips.count, 1, "the running clip was finalised before power off")
        let clip = try XCTUnwrap(clips.first, "no clip on the card at power off\n\(d.log.text.suffix(3000))")
        let (ok, err) = try decodesCleanly(clip)
        XCTAssertTrue(ok, err)
        XCTAssertGreaterThan(try probe(clip).format, 2.0, "the clip ran through the countdown")
        XCTAssertEqual(calls.photosAtCall, 3, "the sequence's taps are kept as photos")
    }
}

extension InProcessRig {
    /// `shutterctl set KEY VALUE`: the value read as shutterctl reads it (JSON, else a string).
    func set(_ key: String, _ text: String, file: StaticString = #filePath, line: UInt = #line) async throws -> ControlReply {
        try await ask(ControlRequest(cmd: "set", key: key, value: ShutterctlCommand.settingValue(text)), file: file, line: line)
    }

    /// `shutterctl focus X Y`.
    func focus(_ x: Double, _ y: Double, file: StaticString = #filePath, line: UInt = #line) async throws -> ControlReply {
        var request = ControlRequest(cmd: "focus")
        (request.x, request.y) = (x, y)
        return try await ask(request, file: file, line: line)
    }
}
