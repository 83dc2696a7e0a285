// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
@testable import ShutterService

/// The service on a simulated board with several cameras (`sim.cameras`), in this
/// process on the manual clock (InProcessRig), driven only through control
/// requests as shutterctl sends them: `camera` switches, goes back from a camera
/// that cannot start, and is remembered; a size preference list falls through to
/// what the camera grants (issue 11).
final class CameraSwitchTests: XCTestCase {
    /// Camera 1 is listed but broken (a loose cable); small frames keep it quick.
    /// `exif.model` "": EXIF names the camera itself (the sim board file names one).
    private static func config(cameras: String) -> String {
        #"{"video": {"width": 320, "height": 240}, "still": {"width": 640, "height": 480}, "exif": {"model": ""}, "#
            + #""audio": {"enabled": false}, "sim": {"modeSwitchMs": 0, "cameras": \#(cameras)}}"#
    }
    private let three = #"["Sim Front", {"model": "Sim Loose", "broken": true}, "Sim Back"]"#

    /// Takes a photo with a tap; returns its EXIF Model.
    private func photoModel(_ d: InProcessRig, file: StaticString = #filePath, line: UInt = #line) async throws -> String {
        let path = try await d.photo(file: file, line: line)
        let (_, out, _) = try runTool("exiftool", ["-s3", "-Model", path])
        return out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func switchTo(_ d: InProcessRig, _ arg: String) async throws -> ControlReply {
        try await d.ask(ControlRequest(cmd: "camera", camera: arg))
    }

    private func inUse(_ d: InProcessRig) async -> (index: Int?, model: String) {
        let c = await d.status().camera
        return (c.index, c.model)
    }

    func testSwitchByIndexNextAndModelAndBackFromABrokenCamera() async throws {
        let d = try await InProcessRig.start(self, json: Self.config(cameras: three))

        let list = try await d.ask(ControlRequest(cmd: "camera"))
        XCTAssertTrue(list.ok)
        let listed = try XCTUnwrap(list.cameras, "\(list)")
        XCTAssertEqual(listed.map(\.model), ["Sim Front", "Sim Loose", "Sim Back"])
        XCTAssertEqual(listed.map(\.index), [0, 1, 2])
        XCTAssertEqual(listed.map(\.inUse), [true, false, false])
        var model = try await photoModel(d)
        XCTAssertEqual(model, "Sim Front")

        // By index: the photo is the second camera's.
        var reply = try await switchTo(d, "2")
        XCTAssertTrue(reply.ok, "\(reply)")
        XCTAssertEqual(reply.camera?.model, "Sim Back")
        XCTAssertEqual(reply.note, "switched from camera 0 (Sim Front) to camera 2 (Sim Back)")
        model = try await photoModel(d)
        XCTAssertEqual(model, "Sim Back")
        var used = await inUse(d)
        XCTAssertEqual(used.index, 2)

        // next wraps round; a model, case-insensitive; an index.
        reply = try await switchTo(d, "next")
        XCTAssertTrue(reply.ok, "\(reply)")
        used = await inUse(d)
        XCTAssertEqual(used.model, "Sim Front")
        reply = try await switchTo(d, "sim back")
        XCTAssertTrue(reply.ok, "\(reply)")
        used = await inUse(d)
        XCTAssertEqual(used.model, "Sim Back")
        reply = try await switchTo(d, "0")
        XCTAssertTrue(reply.ok, "\(reply)")
        used = await inUse(d)
        XCTAssertEqual(used.model, "Sim Front")

        // The broken camera: the reply says it failed and went back; status and a photo show the first.
        reply = try await switchTo(d, "Sim Loose")
        XCTAssertFalse(reply.ok)
        let error = try XCTUnwrap(reply.error)
        print("switch to the broken camera: \(error)")
        XCTAssertTrue(error.hasPrefix("camera 1 (Sim Loose) did not start: no answer from the sensor"), error)
        XCTAssertTrue(error.hasSuffix("went back to camera 0 (Sim Front), which is running again"), error)
        XCTAssertEqual(reply.camera?.model, "Sim Front")
        XCTAssertTrue(d.log.text.contains("camera 1 (Sim Loose) did not start"), d.log.text)
        let status = await d.status()
        XCTAssertEqual(status.state, "idle")
        XCTAssertEqual(status.camera.model, "Sim Front")
        XCTAssertEqual(status.camera.index, 0)
        model = try await photoModel(d)
        XCTAssertEqual(model, "Sim Front")

        // Bad arguments are refused, naming what there is; nothing changes.
        reply = try await switchTo(d, "7")
        XCTAssertFalse(reply.ok)
        XCTAssertEqual(reply.error,
                       "no camera 7; the cameras are 0 (Sim Front), 1 (Sim Loose), 2 (Sim Back); `shutterctl camera` lists them")
        reply = try await switchTo(d, "-1")
        XCTAssertFalse(reply.ok)
        XCTAssertTrue(reply.error?.hasPrefix("camera needs next, an index") == true, "\(reply)")
        // (`shutterctl camera 0 1`, one argument at most, is shutterctl's own: EndToEndTests.)
        used = await inUse(d)
        XCTAssertEqual(used.model, "Sim Front")
    }

    func testASwitchWaitsForTheClipInProgress() async throws {
        let d = try await InProcessRig.start(self, json: Self.config(cameras: three))
        // The hold runs as its own request while the switch is asked for.
        let hold = d.send(ControlRequest(cmd: "hold", seconds: 2))
        try await d.wait(for: "recording", limit: .seconds(20))
        let reply = try await switchTo(d, "2")
        XCTAssertTrue(reply.ok, "\(reply)")
        try await d.advance(until: "the hold's answer") { hold.reply != nil }
        let held = try XCTUnwrap(hold.reply)
        XCTAssertTrue(held.ok, "\(held)")
        let clip = try XCTUnwrap(held.files?.first)
        let (clean, err) = try decodesCleanly(clip)
        XCTAssertTrue(clean, err)
        XCTAssertGreaterThan(try probe(clip).format, 1.5, "the clip ran its length on the first camera")
        let log = d.log.text
        let waited = try XCTUnwrap(log.range(of: "camera switch to 2 (Sim Back): waiting for the capture in progress"), log)
        let switched = try XCTUnwrap(log.range(of: "camera switch: 0 (Sim Front) to 2 (Sim Back)"), log)
        XCTAssertLessThan(waited.lowerBound, switched.lowerBound)
        let used = await inUse(d)
        XCTAssertEqual(used.model, "Sim Back")
    }

    func testTheChoiceSurvivesARestartAndFallsBackWhenTheCameraIsGone() async throws {
        let d = try await InProcessRig.start(self, json: Self.config(cameras: three))
        let reply = try await switchTo(d, "Sim Back")
        XCTAssertTrue(reply.ok, "\(reply)")
        var code = try await d.stop()
        XCTAssertEqual(code, 0)

        let e = try await InProcessRig.start(self, json: Self.config(cameras: three), dir: d.dir)
        var used = await inUse(e)
        XCTAssertEqual(used.model, "Sim Back", e.log.text)
        XCTAssertEqual(used.index, 2)
        XCTAssertTrue(e.log.text.contains("camera 2 (Sim Back), as `shutterctl camera` chose"), e.log.text)
        var model = try await photoModel(e)
        XCTAssertEqual(model, "Sim Back")
        code = try await e.stop()
        XCTAssertEqual(code, 0)

        // The remembered camera is unplugged: the configured one, with a warning.
        let f = try await InProcessRig.start(self, json: Self.config(cameras: #"["Sim Front", "Sim Other"]"#), dir: d.dir)
        used = await inUse(f)
        XCTAssertEqual(used.model, "Sim Front", f.log.text)
        XCTAssertTrue(f.log.text.contains("the camera `shutterctl camera` chose, 2 (Sim Back), is not connected "
                                          + "(the cameras are 0 (Sim Front), 1 (Sim Other)); using the configured camera"),
                      f.log.text)
        model = try await photoModel(f)
        XCTAssertEqual(model, "Sim Front")
    }

    func testASizeListFallsThroughToTheSizeTheCameraGrants() async throws {
        // `focused`: the still is a capture at a still size (the `press` moment's photo is a video frame here).
        let config = #"{"video": {"sizes": ["640x480", "320x240"]}, "still": {"sizes": ["1280x960", "400x300"], "moment": "focused"}, "#
            + #""audio": {"enabled": false}, "sim": {"modeSwitchMs": 0, "cameras": [{"model": "Sim Small", "maxSize": "400x300"}]}}"#
        let d = try await InProcessRig.start(self, json: config)
        let photo = try await d.photo()
        let (_, size, _) = try runTool("exiftool", ["-s3", "-ImageSize", photo])
        XCTAssertEqual(size.trimmingCharacters(in: .whitespacesAndNewlines), "400x300")

        let camera = await d.status().camera
        print("status.camera sizes: video \(String(describing: camera.videoSize)) entry \(String(describing: camera.videoSizeEntry)), "
              + "still \(String(describing: camera.stillSize)) entry \(String(describing: camera.stillSizeEntry))")
        XCTAssertEqual(camera.videoSize, PixelSize(width: 320, height: 240))
        XCTAssertEqual(camera.videoSizeEntry, 1, "the second preference")
        XCTAssertEqual(camera.stillSize, PixelSize(width: 400, height: 300))
        XCTAssertEqual(camera.stillSizeEntry, 1)
        XCTAssertEqual(camera.videoSizesAsked.first, PixelSize(width: 640, height: 480))
        XCTAssertTrue(d.log.text.contains("video 320x240 (preference 2 of 2; not granted: 640x480)"), d.log.text)
        XCTAssertTrue(d.log.text.contains("stills are 400x300 (preference 2 of 2; not granted: 1280x960)"), d.log.text)

        let held = try await d.ask(ControlRequest(cmd: "hold", seconds: 1))
        XCTAssertTrue(held.ok, "\(held)")
        let clip = try XCTUnwrap(held.files?.first)
        let (_, dims, _) = try runTool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                   "stream=width,height", "-of", "csv=p=0", clip])
        XCTAssertEqual(dims.trimmingCharacters(in: .whitespacesAndNewlines), "320,240")
    }
}
