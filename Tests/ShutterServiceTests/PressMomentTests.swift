// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
import ShutterSim
@testable import ShutterService

/// `still.moment` on the service and the simulated board, in this process on the
/// manual clock (InProcessRig), driven through control requests as shutterctl
/// sends them (docs/control-and-api.md "The moment of the press"). Which frame a photo is comes
/// from its pixels: the label the simulated camera burns into every frame (frame
/// number, exposure start on the service's clock), read back from the JPEG. The
/// press is when the test sent it, on the clock it moves: the figures the service
/// reports are checked exactly, whatever this machine's speed.
final class PressMomentTests: XCTestCase {
    private let period = 1000.0 / 30

    private func config(moment: String, stillStream: String = "[1280, 720]", switchMs: Int = 300) -> String {
        #"{"video": {"width": 640, "height": 360, "fps": 30}, "still": {"width": 1600, "height": 900, "moment": "\#(moment)"}, "#
            + #""audio": {"enabled": false}, "sim": {"modeSwitchMs": \#(switchMs), "stillStream": \#(stillStream)}}"#
    }

    private func ms(_ d: InProcessRig) -> Double { Double(d.clock.now().nanoseconds) / 1e6 }

    func testPressMomentPhotosAreTheFrameAtThePressFromTheStillStream() async throws {
        let d = try await InProcessRig.start(self, json: config(moment: "press"))
        var labels: [(frame: UInt64, millis: Int64)] = []
        for i in 0..<4 {
            // Alternately a button press of the client's own and a `tap` request.
            let before = ms(d)
            if i % 2 == 0 {
                let press = try await d.ask(ControlRequest(cmd: "press"))
                XCTAssertTrue(press.ok, "\(press)")
            }
            let after = ms(d)
            let r: ControlReply
            if i % 2 == 0 {
                await d.advance(by: .milliseconds(150))
                r = try await d.ask(ControlRequest(cmd: "release"))
            } else {
                r = try await d.ask(ControlRequest(cmd: "tap"))
            }
            XCTAssertTrue(r.ok, "\(r)")
            XCTAssertEqual(r.moment, "press")
            let offset = try XCTUnwrap(r.pressToExposureMs)
            XCTAssertLessThanOrEqual(abs(offset), period + 0.01, "within one frame of the press")
            XCTAssertNotNil(r.releaseToDurableMs)
            let path = try XCTUnwrap(r.files?.first)
            let photo = try GreyPicture(path)
            XCTAssertEqual(photo.width, 1280, "the still stream's size")
            XCTAssertEqual(photo.height, 720)
            let label = try XCTUnwrap(photo.label, "the burned-in label reads back from \(path)")
            labels.append(label)
            if i % 2 == 0 {
                // The press the service reports (the pixels' exposure start minus its
                // offset) lies between the test's clock readings around `press`.
                let press = Double(label.millis) - offset
                XCTAssertGreaterThanOrEqual(press, before - 1.5, "pixels T\(label.millis), offset \(offset)")
                XCTAssertLessThanOrEqual(press, after + 1.5, "pixels T\(label.millis), offset \(offset)")
            } else {
                // A request's press is its arrival: after the test sent it.
                XCTAssertGreaterThanOrEqual(Double(label.millis), before - period - 1.5)
            }
            let status = await d.status()
            let last = try XCTUnwrap(status.lastPhoto)
            XCTAssertEqual(last.moment, "press")
            XCTAssertEqual(last.pressToExposureMs, offset)
            let dropped = Double(status.counters.droppedFrames)
            let gap = try XCTUnwrap(last.videoGapMs)
            XCTAssertLessThanOrEqual(gap, period * (1 + dropped) + 1, "no mode switch: the video went on")
            print("press photo \(i): F\(label.frame) T\(label.millis), press to exposure \(offset) ms, release to durable "
                  + "\(r.releaseToDurableMs ?? -1) ms, video gap \(gap) ms, bracket [\(before), \(after)]")
        }
        // Frame numbers and burned-in times agree: each photo is one sensor frame.
        for (a, b) in zip(labels, labels.dropFirst()) {
            let frames = Double(b.frame) - Double(a.frame)
            XCTAssertEqual(Double(b.millis - a.millis), frames * period, accuracy: period / 2, "\(a) → \(b)")
        }
        XCTAssertEqual(d.files("MP4"), [], "taps leave no clip")
    }

    func testOneStreamGivesTheVideoFrameAndATapDuringARecordingLeavesNoGap() async throws {
        let d = try await InProcessRig.start(self, json: config(moment: "press", stillStream: "null"))
        let record = try await d.ask(ControlRequest(cmd: "record", action: "start"))
        XCTAssertTrue(record.ok, "\(record)")
        await d.advance(by: .milliseconds(600))
        let before = ms(d)
        let pressed = try await d.ask(ControlRequest(cmd: "press"))
        XCTAssertTrue(pressed.ok)
        let after = ms(d)
        await d.advance(by: .milliseconds(150))
        let r = try await d.ask(ControlRequest(cmd: "release"))
        XCTAssertEqual(r.moment, "press", "\(r)")
        let offset = try XCTUnwrap(r.pressToExposureMs)
        XCTAssertLessThanOrEqual(abs(offset), period + 0.01)
        let photo = try GreyPicture(try XCTUnwrap(r.files?.first))
        XCTAssertEqual([photo.width, photo.height], [640, 360], "one stream: the video frame")
        let label = try XCTUnwrap(photo.label)
        let press = Double(label.millis) - offset
        XCTAssertTrue(press >= before - 1.5 && press <= after + 1.5, "press \(press) in [\(before), \(after)]")
        await d.advance(by: .milliseconds(600))
        let stop = try await d.ask(ControlRequest(cmd: "record", action: "stop"))
        XCTAssertTrue(stop.ok, "\(stop)")
        let clip = try XCTUnwrap(stop.files?.first)
        let (_, out, _) = try runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries",
                                                  "frame=pts_time", "-of", "csv=p=0", clip])
        let times = out.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        XCTAssertGreaterThan(times.count, 20, out)
        // Frames the camera dropped, and those the clip's encoder dropped being behind
        // (a loaded machine): both as the service reports them.
        let dropped = Double(await d.status().counters.droppedFrames + d.encoderDroppedFrames())
        let longest = zip(times, times.dropFirst()).map { ($1 - $0) * 1000 }.max() ?? 0
        XCTAssertLessThanOrEqual(longest, period * (1 + dropped) + 1, "the recording has no gap around the tap: "
                                 + d.log.text.split(separator: "\n").filter { $0.contains("drop") || $0.contains("behind") }
                                    .joined(separator: "\n"))
        print("tap during a recording: F\(label.frame), press to exposure \(offset) ms; clip \(times.count) frames, longest gap \(longest) ms")
    }

    func testFocusedMomentIsFullSizeAndStopsTheVideoForTheSwitch() async throws {
        let d = try await InProcessRig.start(self, json: config(moment: "focused"))
        let pressed = try await d.ask(ControlRequest(cmd: "press"))
        XCTAssertTrue(pressed.ok)
        await d.advance(by: .milliseconds(150))
        let r = try await d.ask(ControlRequest(cmd: "release"))
        XCTAssertEqual(r.moment, "focused", "\(r)")
        let offset = try XCTUnwrap(r.pressToExposureMs)
        XCTAssertGreaterThan(offset, 150, "exposed after the release, half the switch in")
        let photo = try GreyPicture(try XCTUnwrap(r.files?.first))
        XCTAssertEqual([photo.width, photo.height], [1600, 900], "the full sensor size after the mode switch")
        // The video gap: the switch, plus the time from the last frame delivered before
        // it (under two frames: the frame exposing when the switch began is lost with it).
        var gap = 0.0
        try await d.advance(until: "video after the switch", limit: .seconds(10)) {
            gap = await d.status().lastPhoto?.videoGapMs ?? 0
            return gap >= 300
        }
        let dropped = Double(await d.status().counters.droppedFrames)
        XCTAssertLessThanOrEqual(gap, 300 + period * (2 + dropped) + 1, "the gap is the sim's switch cost")
        print("focused photo: press to exposure \(offset) ms, release to durable \(r.releaseToDurableMs ?? -1) ms, video gap \(gap) ms")
    }

    func testAFlashPhotoOfThePressMomentIsTakenFocused() async throws {
        let d = try await InProcessRig.start(
            self, json: #"{"video": {"width": 640, "height": 360}, "still": {"width": 1600, "height": 900}, "#
                + #""flash": {"mode": "on"}, "audio": {"enabled": false}, "sim": {"modeSwitchMs": 100}}"#)
        let r = try await d.ask(ControlRequest(cmd: "tap"))
        XCTAssertEqual(r.moment, "focused", "a flash cannot light an exposure already made: \(r)")
        // The flash, through the LEDs' one ordered channel: lit before the exposure, out after.
        XCTAssertEqual(d.board.cameras.map(\.stillsLit).reduce(0, +), 1, "the still's exposure began with the flash lit")
        XCTAssertFalse(d.board.flashLED.isOn, "the flash is out once the still is in hand")
        let flashPattern = await d.status().leds["flash"]?.pattern
        XCTAssertEqual(flashPattern, "off")
        let photo = try GreyPicture(try XCTUnwrap(r.files?.first))
        XCTAssertEqual([photo.width, photo.height], [1600, 900])
    }
}

/// A JPEG decoded to 8-bit luma by ffmpeg.
private struct GreyPicture {
    let width: Int
    let height: Int
    let luma: [UInt8]

    init(_ path: String) throws {
        let (_, dims, _) = try runTool("ffprobe", ["-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0", path])
        let wh = dims.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").compactMap { Int($0) }
        guard wh.count == 2 else { throw HarnessError("ffprobe: \(dims)") }
        (width, height) = (wh[0], wh[1])
        let raw = path + ".grey"
        defer { try? FileManager.default.removeItem(atPath: raw) }
        let (code, _, err) = try runTool("ffmpeg", ["-v", "error", "-y", "-i", path, "-f", "rawvideo", "-pix_fmt", "gray", raw])
        guard code == 0 else { throw HarnessError("ffmpeg: \(err)") }
        luma = Array(try Data(contentsOf: URL(fileURLWithPath: raw)))
        guard luma.count == width * height else { throw HarnessError("decoded \(luma.count) bytes") }
    }

    var label: (frame: UInt64, millis: Int64)? { BurnedInLabel.read(luma: luma, width: width, height: height) }
}
