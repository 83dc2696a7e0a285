import Foundation
import XCTest
import ShutterSim

/// `still.moment` on the real shutterd and the simulated board, driven through
/// shutterctl (README "The moment of the press"). Which frame a photo is comes
/// from its pixels: the label the simulated camera burns into every frame
/// (frame number, exposure start on CLOCK_MONOTONIC), read back from the JPEG.
final class EndToEndPressMomentTests: XCTestCase {
    private let period = 1000.0 / 30

    private func config(moment: String, stillStream: String = "[1280, 720]", switchMs: Int = 300) -> String {
        #"{"video": {"width": 640, "height": 360, "fps": 30}, "still": {"width": 1600, "height": 900, "moment": "\#(moment)"}, "#
            + #""audio": {"enabled": false}, "sim": {"modeSwitchMs": \#(switchMs), "stillStream": \#(stillStream)}}"#
    }

    func testPressMomentPhotosAreTheFrameAtThePressFromTheStillStream() throws {
        let d = try DaemonHarness(config: config(moment: "press"))
        try d.start()
        defer { d.stop() }
        var labels: [(frame: UInt64, millis: Int64)] = []
        for i in 0..<4 {
            // Alternately a button press of the client's own and a `tap` request.
            let before = monotonicMs()
            if i % 2 == 0 { XCTAssertEqual(try d.ctl("press").0, 0) }
            let after = monotonicMs()
            var reply: [String: Any]?
            if i % 2 == 0 {
                usleep(150_000)
                reply = try d.ctl("release").1
            } else {
                reply = try d.ctl("tap").1
            }
            let r = try XCTUnwrap(reply, d.log())
            XCTAssertEqual(r["ok"] as? Bool, true, "\(r)")
            XCTAssertEqual(r["moment"] as? String, "press")
            let offset = try XCTUnwrap(r["pressToExposureMs"] as? Double)
            XCTAssertLessThanOrEqual(abs(offset), period + 0.01, "within one frame of the press")
            XCTAssertNotNil(r["releaseToDurableMs"] as? Double)
            let path = try XCTUnwrap((r["files"] as? [String])?.first)
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
            let last = try XCTUnwrap(d.status()["lastPhoto"] as? [String: Any])
            XCTAssertEqual(last["moment"] as? String, "press")
            XCTAssertEqual(last["pressToExposureMs"] as? Double, offset)
            let dropped = Double(try d.counters()["droppedFrames"] ?? 0)
            let gap = try XCTUnwrap(last["videoGapMs"] as? Double)
            XCTAssertLessThanOrEqual(gap, period * (1 + dropped) + 1, "no mode switch: the video went on")
            print("press photo \(i): F\(label.frame) T\(label.millis), press to exposure \(offset) ms, release to durable "
                  + "\(r["releaseToDurableMs"] ?? "-") ms, video gap \(gap) ms, bracket [\(before), \(after)]")
        }
        // Frame numbers and burned-in times agree: each photo is one sensor frame.
        for (a, b) in zip(labels, labels.dropFirst()) {
            let frames = Double(b.frame) - Double(a.frame)
            XCTAssertEqual(Double(b.millis - a.millis), frames * period, accuracy: period / 2, "\(a) → \(b)")
        }
        XCTAssertEqual(d.files("MP4"), [], "taps leave no clip")
    }

    func testOneStreamGivesTheVideoFrameAndATapDuringARecordingLeavesNoGap() throws {
        let d = try DaemonHarness(config: config(moment: "press", stillStream: "null"))
        try d.start()
        defer { d.stop() }
        XCTAssertEqual(try d.ctl("record", "start").0, 0, d.log())
        usleep(600_000)
        let before = monotonicMs()
        XCTAssertEqual(try d.ctl("press").0, 0)
        let after = monotonicMs()
        usleep(150_000)
        let r = try XCTUnwrap(try d.ctl("release").1, d.log())
        XCTAssertEqual(r["moment"] as? String, "press", "\(r)")
        let offset = try XCTUnwrap(r["pressToExposureMs"] as? Double)
        XCTAssertLessThanOrEqual(abs(offset), period + 0.01)
        let photo = try GreyPicture(try XCTUnwrap((r["files"] as? [String])?.first))
        XCTAssertEqual([photo.width, photo.height], [640, 360], "one stream: the video frame")
        let label = try XCTUnwrap(photo.label)
        let press = Double(label.millis) - offset
        XCTAssertTrue(press >= before - 1.5 && press <= after + 1.5, "press \(press) in [\(before), \(after)]")
        usleep(600_000)
        let (code, stop) = try d.ctl("record", "stop")
        XCTAssertEqual(code, 0, d.log())
        let clip = try XCTUnwrap((stop?["files"] as? [String])?.first)
        let (_, out, _) = try runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries",
                                                  "frame=pts_time", "-of", "csv=p=0", clip])
        let times = out.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        XCTAssertGreaterThan(times.count, 20, out)
        let dropped = Double(try d.counters()["droppedFrames"] ?? 0)
        let longest = zip(times, times.dropFirst()).map { ($1 - $0) * 1000 }.max() ?? 0
        XCTAssertLessThanOrEqual(longest, period * (1 + dropped) + 1, "the recording has no gap around the tap")
        print("tap during a recording: F\(label.frame), press to exposure \(offset) ms; clip \(times.count) frames, longest gap \(longest) ms")
    }

    func testFocusedMomentIsFullSizeAndStopsTheVideoForTheSwitch() throws {
        let d = try DaemonHarness(config: config(moment: "focused"))
        try d.start()
        defer { d.stop() }
        XCTAssertEqual(try d.ctl("press").0, 0)
        usleep(150_000)
        let r = try XCTUnwrap(try d.ctl("release").1, d.log())
        XCTAssertEqual(r["moment"] as? String, "focused", "\(r)")
        let offset = try XCTUnwrap(r["pressToExposureMs"] as? Double)
        XCTAssertGreaterThan(offset, 150, "exposed after the release, half the switch in")
        let photo = try GreyPicture(try XCTUnwrap((r["files"] as? [String])?.first))
        XCTAssertEqual([photo.width, photo.height], [1600, 900], "the full sensor size after the mode switch")
        // The video gap: the switch, plus the time from the last frame delivered before
        // it (under two frames: the frame exposing when the switch began is lost with it).
        var gap = 0.0
        try d.waitFor("video after the switch", timeout: 10) {
            gap = ((try d.status()["lastPhoto"] as? [String: Any])?["videoGapMs"] as? Double) ?? 0
            return gap >= 300
        }
        let dropped = Double(try d.counters()["droppedFrames"] ?? 0)
        XCTAssertLessThanOrEqual(gap, 300 + period * (2 + dropped) + 1, "the gap is the sim's switch cost")
        print("focused photo: press to exposure \(offset) ms, release to durable \(r["releaseToDurableMs"] ?? "-") ms, video gap \(gap) ms")
    }

    func testAFlashPhotoOfThePressMomentIsTakenFocused() throws {
        let d = try DaemonHarness(config: #"{"video": {"width": 640, "height": 360}, "still": {"width": 1600, "height": 900}, "#
                                  + #""flash": {"mode": "on"}, "audio": {"enabled": false}, "sim": {"modeSwitchMs": 100}}"#)
        try d.start()
        defer { d.stop() }
        let r = try XCTUnwrap(try d.ctl("tap").1, d.log())
        XCTAssertEqual(r["moment"] as? String, "focused", "a flash cannot light an exposure already made: \(r)")
        let photo = try GreyPicture(try XCTUnwrap((r["files"] as? [String])?.first))
        XCTAssertEqual([photo.width, photo.height], [1600, 900])
    }
}

private func monotonicMs() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
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
