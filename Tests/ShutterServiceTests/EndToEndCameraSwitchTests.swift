import Foundation
import XCTest
@testable import ShutterService

/// The real shutterd on a simulated board with several cameras (`sim.cameras`),
/// driven only through shutterctl: `shutterctl camera` switches, goes back from
/// a camera that cannot start, and is remembered; a size preference list falls
/// through to what the camera grants (issue 11).
final class EndToEndCameraSwitchTests: XCTestCase {
    /// Camera 1 is listed but broken (a loose cable); small frames keep it quick.
    /// `exif.model` "": EXIF names the camera itself (the sim board file names one).
    private static func config(cameras: String) -> String {
        #"{"video": {"width": 320, "height": 240}, "still": {"width": 640, "height": 480}, "exif": {"model": ""}, "#
            + #""audio": {"enabled": false}, "sim": {"modeSwitchMs": 0, "cameras": \#(cameras)}}"#
    }
    private let three = #"["Sim Front", {"model": "Sim Loose", "broken": true}, "Sim Back"]"#

    /// Takes a photo with a tap; returns its EXIF Model.
    private func photoModel(_ d: DaemonHarness, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let (code, reply) = try d.ctl("tap")
        XCTAssertEqual(code, 0, "tap: \(String(describing: reply))\n\(d.log())", file: file, line: line)
        let path = try XCTUnwrap((reply?["files"] as? [String])?.first, d.log(), file: file, line: line)
        let (_, out, _) = try runTool("exiftool", ["-s3", "-Model", path])
        return out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func switchTo(_ d: DaemonHarness, _ arg: String) throws -> (Int32, [String: Any]) {
        let (code, reply) = try d.ctl("camera", arg)
        return (code, reply ?? [:])
    }

    private func inUse(_ d: DaemonHarness) throws -> (index: Int?, model: String?) {
        let camera = try d.status()["camera"] as? [String: Any]
        return (camera?["index"] as? Int, camera?["model"] as? String)
    }

    func testSwitchByIndexNextAndModelAndBackFromABrokenCamera() throws {
        let d = try DaemonHarness(config: Self.config(cameras: three))
        try d.start()
        defer { d.stop() }

        let (listCode, list) = try d.ctl("camera")
        XCTAssertEqual(listCode, 0)
        let listed = try XCTUnwrap(list?["cameras"] as? [[String: Any]], "\(String(describing: list))")
        XCTAssertEqual(listed.map { $0["model"] as? String }, ["Sim Front", "Sim Loose", "Sim Back"])
        XCTAssertEqual(listed.map { $0["index"] as? Int }, [0, 1, 2])
        XCTAssertEqual(listed.map { $0["inUse"] as? Bool }, [true, false, false])
        XCTAssertEqual(try photoModel(d), "Sim Front")

        // By index: the photo is the second camera's.
        var (code, reply) = try switchTo(d, "2")
        XCTAssertEqual(code, 0, "\(reply)\n\(d.log())")
        XCTAssertEqual((reply["camera"] as? [String: Any])?["model"] as? String, "Sim Back")
        XCTAssertEqual(reply["note"] as? String, "switched from camera 0 (Sim Front) to camera 2 (Sim Back)")
        XCTAssertEqual(try photoModel(d), "Sim Back")
        XCTAssertEqual(try inUse(d).index, 2)

        // next wraps round; a model, case-insensitive; an index.
        (code, reply) = try switchTo(d, "next")
        XCTAssertEqual(code, 0, "\(reply)")
        XCTAssertEqual(try inUse(d).model, "Sim Front")
        (code, reply) = try switchTo(d, "sim back")
        XCTAssertEqual(code, 0, "\(reply)")
        XCTAssertEqual(try inUse(d).model, "Sim Back")
        (code, reply) = try switchTo(d, "0")
        XCTAssertEqual(code, 0, "\(reply)")
        XCTAssertEqual(try inUse(d).model, "Sim Front")

        // The broken camera: the reply says it failed and went back; status and a photo show the first.
        (code, reply) = try switchTo(d, "Sim Loose")
        XCTAssertEqual(code, 1)
        XCTAssertEqual(reply["ok"] as? Bool, false)
        let error = try XCTUnwrap(reply["error"] as? String)
        print("switch to the broken camera: \(error)")
        XCTAssertTrue(error.hasPrefix("camera 1 (Sim Loose) did not start: no answer from the sensor"), error)
        XCTAssertTrue(error.hasSuffix("went back to camera 0 (Sim Front), which is running again"), error)
        XCTAssertEqual((reply["camera"] as? [String: Any])?["model"] as? String, "Sim Front")
        XCTAssertTrue(d.log().contains("camera 1 (Sim Loose) did not start"), d.log())
        let status = try d.status()
        XCTAssertEqual(status["state"] as? String, "idle")
        XCTAssertEqual((status["camera"] as? [String: Any])?["model"] as? String, "Sim Front")
        XCTAssertEqual((status["camera"] as? [String: Any])?["index"] as? Int, 0)
        XCTAssertEqual(try photoModel(d), "Sim Front")

        // Bad arguments are refused, naming what there is; nothing changes.
        (code, reply) = try switchTo(d, "7")
        XCTAssertEqual(code, 1)
        XCTAssertEqual(reply["error"] as? String,
                       "no camera 7; the cameras are 0 (Sim Front), 1 (Sim Loose), 2 (Sim Back); `shutterctl camera` lists them")
        (code, reply) = try switchTo(d, "-1")
        XCTAssertEqual(code, 1)
        XCTAssertTrue((reply["error"] as? String)?.hasPrefix("camera needs next, an index") == true, "\(reply)")
        XCTAssertEqual(try d.ctl("camera", "0", "1").0, 64, "one argument at most")
        XCTAssertEqual(try inUse(d).model, "Sim Front")
    }

    func testASwitchWaitsForTheClipInProgress() throws {
        let d = try DaemonHarness(config: Self.config(cameras: three))
        try d.start()
        defer { d.stop() }
        // The hold runs as its own shutterctl while the switch is asked for.
        let hold = Process()
        hold.executableURL = URL(fileURLWithPath: DaemonHarness.binDir + "/shutterctl")
        hold.arguments = ["--socket", d.socket, "hold", "2"]
        let out = Pipe()
        hold.standardOutput = out
        try hold.run()
        try d.waitFor("recording", timeout: 20) { try d.status()["state"] as? String == "recording" }
        let (code, reply) = try switchTo(d, "2")
        XCTAssertEqual(code, 0, "\(reply)")
        let heldData = out.fileHandleForReading.readDataToEndOfFile()
        hold.waitUntilExit()
        XCTAssertEqual(hold.terminationStatus, 0, d.log())
        let held = try JSONSerialization.jsonObject(with: heldData) as? [String: Any]
        let clip = try XCTUnwrap((held?["files"] as? [String])?.first)
        let (clean, err) = try decodesCleanly(clip)
        XCTAssertTrue(clean, err)
        XCTAssertGreaterThan(try probe(clip).format, 1.5, "the clip ran its length on the first camera")
        let log = d.log()
        let waited = try XCTUnwrap(log.range(of: "camera switch to 2 (Sim Back): waiting for the capture in progress"), log)
        let switched = try XCTUnwrap(log.range(of: "camera switch: 0 (Sim Front) to 2 (Sim Back)"), log)
        XCTAssertLessThan(waited.lowerBound, switched.lowerBound)
        XCTAssertEqual(try inUse(d).model, "Sim Back")
    }

    func testTheChoiceSurvivesARestartAndFallsBackWhenTheCameraIsGone() throws {
        let d = try DaemonHarness(config: Self.config(cameras: three))
        try d.start()
        defer { d.stop() }
        let (code, reply) = try switchTo(d, "Sim Back")
        XCTAssertEqual(code, 0, "\(reply)")
        d.stop()

        try d.start()
        XCTAssertEqual(try inUse(d).model, "Sim Back", d.log())
        XCTAssertEqual(try inUse(d).index, 2)
        XCTAssertTrue(d.log().contains("camera 2 (Sim Back), as `shutterctl camera` chose"), d.log())
        XCTAssertEqual(try photoModel(d), "Sim Back")
        d.stop()

        // The remembered camera is unplugged: the configured one, with a warning.
        try Self.config(cameras: #"["Sim Front", "Sim Other"]"#).write(toFile: d.dir + "/shutter.json", atomically: true,
                                                                      encoding: .utf8)
        try d.start()
        XCTAssertEqual(try inUse(d).model, "Sim Front", d.log())
        XCTAssertTrue(d.log().contains("the camera `shutterctl camera` chose, 2 (Sim Back), is not connected "
                                       + "(the cameras are 0 (Sim Front), 1 (Sim Other)); using the configured camera"),
                      d.log())
        XCTAssertEqual(try photoModel(d), "Sim Front")
    }

    func testASizeListFallsThroughToTheSizeTheCameraGrants() throws {
        // `focused`: the still is a capture at a still size (the `press` moment's photo is a video frame here).
        let config = #"{"video": {"sizes": ["640x480", "320x240"]}, "still": {"sizes": ["1280x960", "400x300"], "moment": "focused"}, "#
            + #""audio": {"enabled": false}, "sim": {"modeSwitchMs": 0, "cameras": [{"model": "Sim Small", "maxSize": "400x300"}]}}"#
        let d = try DaemonHarness(config: config)
        try d.start()
        defer { d.stop() }
        let (code, reply) = try d.ctl("tap")
        XCTAssertEqual(code, 0, d.log())
        let photo = try XCTUnwrap((reply?["files"] as? [String])?.first)
        let (_, size, _) = try runTool("exiftool", ["-s3", "-ImageSize", photo])
        XCTAssertEqual(size.trimmingCharacters(in: .whitespacesAndNewlines), "400x300")

        let camera = try XCTUnwrap(try d.status()["camera"] as? [String: Any])
        print("status.camera sizes: video \(camera["videoSize"] ?? "-") entry \(camera["videoSizeEntry"] ?? "-"), "
              + "still \(camera["stillSize"] ?? "-") entry \(camera["stillSizeEntry"] ?? "-")")
        XCTAssertEqual(camera["videoSize"] as? [String: Int], ["width": 320, "height": 240])
        XCTAssertEqual(camera["videoSizeEntry"] as? Int, 1, "the second preference")
        XCTAssertEqual(camera["stillSize"] as? [String: Int], ["width": 400, "height": 300])
        XCTAssertEqual(camera["stillSizeEntry"] as? Int, 1)
        XCTAssertEqual((camera["videoSizesAsked"] as? [[String: Int]])?.first, ["width": 640, "height": 480])
        XCTAssertTrue(d.log().contains("video 320x240 (preference 2 of 2; not granted: 640x480)"), d.log())
        XCTAssertTrue(d.log().contains("stills are 400x300 (preference 2 of 2; not granted: 1280x960)"), d.log())

        let (holdCode, held) = try d.ctl("hold", "1")
        XCTAssertEqual(holdCode, 0, d.log())
        let clip = try XCTUnwrap((held?["files"] as? [String])?.first)
        let (_, dims, _) = try runTool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                   "stream=width,height", "-of", "csv=p=0", clip])
        XCTAssertEqual(dims.trimmingCharacters(in: .whitespacesAndNewlines), "320,240")
    }
}
