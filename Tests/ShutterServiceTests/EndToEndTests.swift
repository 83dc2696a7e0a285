import Foundation
import XCTest
@testable import ShutterService

/// The real shutterd on the simulated board, driven only through shutterctl and signals.
final class EndToEndTests: XCTestCase {
    func testTapGivesOneJPEGAtTheStillSizeWithEXIF() throws {
        let d = try DaemonHarness(config: #"{"still": {"moment": "focused"}}"#)
        try d.start()
        let (code, reply) = try d.ctl("tap")
        XCTAssertEqual(code, 0, d.log())
        let files = reply?["files"] as? [String] ?? []
        XCTAssertEqual(files.count, 1)
        XCTAssertEqual(d.files("JPG"), files, "exactly one photo on the card")
        XCTAssertEqual(d.files("MP4"), [], "a tap leaves no clip")
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
        let litter = try FileManager.default.contentsOfDirectory(atPath: d.storage).filter { $0.hasPrefix(".shutter-pending") }
        XCTAssertEqual(litter, [])
    }

    func testHoldGivesAClipOfThatLengthFromThePressWithVideoAndAudio() throws {
        let d = try DaemonHarness()
        try d.start()
        let (code, reply) = try d.ctl("hold", "3")
        XCTAssertEqual(code, 0, d.log())
        let files = reply?["files"] as? [String] ?? []
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
        let offset = try XCTUnwrap(reply?["clipStartOffsetMs"] as? Double)
        XCTAssertLessThanOrEqual(offset, 0, "the clip starts at or before the press")
        XCTAssertEqual(d.files("JPG"), [], "a hold takes no photo")
    }

    func testWithoutAMicrophoneAClipHasVideoOnly() throws {
        let d = try DaemonHarness(config: #"{"audio": {"enabled": false}}"#)
        try d.start()
        let (code, reply) = try d.ctl("hold", "1.5")
        XCTAssertEqual(code, 0, d.log())
        let p = try probe(try XCTUnwrap((reply?["files"] as? [String])?.first))
        XCTAssertEqual(p.streams["video"]?.codec, "h264")
        XCTAssertNil(p.streams["audio"], "no empty audio track")
    }

    func testTapDuringARecordingIsASnapshotAndTheClipIsKept() throws {
        let d = try DaemonHarness()
        try d.start()
        XCTAssertEqual(try d.ctl("record", "start").0, 0)
        try d.waitFor("recording", timeout: 10) { try d.status()["state"] as? String == "recording" }
        let (code, reply) = try d.ctl("tap")
        XCTAssertEqual(code, 0, d.log())
        let photo = try XCTUnwrap((reply?["files"] as? [String])?.first)
        let (_, dims, _) = try runTool("ffprobe", ["-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0", photo])
        XCTAssertEqual(dims.trimmingCharacters(in: .whitespacesAndNewlines), "1920,1080", "a still from the video stream")
        usleep(500_000)
        let (stopCode, stopReply) = try d.ctl("record", "stop")
        XCTAssertEqual(stopCode, 0, d.log())
        let clip = try XCTUnwrap((stopReply?["files"] as? [String])?.first)
        XCTAssertGreaterThan(try probe(clip).format, 0.8, "the clip was not cut by the snapshot")
    }

    func testPressesWhileAStillIsSavingAreQueuedOrRefusedNeverLost() throws {
        let d = try DaemonHarness(config: #"{"shutdown": {"taps": 0}}"#, extraArgs: ["--log-level", "debug"])
        try d.start()
        // A button tap and two remote taps at once: the first still is saving when
        // the others come; one waits, the next is refused, each is told which.
        let book = OutcomeBook(socket: d.socket)
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { book.run(["press"]); usleep(100_000); book.run(["release"]) }
        for _ in 0..<2 {
            usleep(30_000)
            DispatchQueue.global().async(group: group) { book.run(["tap"]) }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        let replies = book.allReplies.filter { $0.args != ["press"] }
        let photos = replies.flatMap(\.files)
        let refused = replies.filter { !$0.ok }
        XCTAssertGreaterThanOrEqual(photos.count, 2, "the first and the queued request both give photos: \(replies)")
        XCTAssertEqual(photos.count + refused.count, 3, "every request is a photo or a refusal: \(replies)")
        for r in refused { XCTAssertTrue(r.error?.hasPrefix("busy: ") ?? false, r.error ?? "") }
        XCTAssertEqual(Set(d.files("JPG") + d.files("MP4")), Set(photos), "the files on the card are exactly the ones the replies name: \(replies)")
        if Set(d.files("JPG") + d.files("MP4")) != Set(photos) { try? d.log().write(toFile: "/tmp/e2e-fail.log", atomically: true, encoding: .utf8) }
    }

    func testSIGKILLMidHoldLeavesAPlayableClipAndARestartContinuesTheNumbering() throws {
        let d = try DaemonHarness()
        try d.start()
        XCTAssertEqual(try d.ctl("tap").0, 0)
        XCTAssertEqual(try d.ctl("press").0, 0)
        try d.waitFor("recording", timeout: 10) { try d.status()["state"] as? String == "recording" }
        usleep(2_500_000)
        d.signal(SIGKILL)
        d.waitExit()
        let clips = d.files("MP4")
        XCTAssertEqual(clips.count, 1, d.log())
        let clip = try XCTUnwrap(clips.first)
        let (ok, err) = try decodesCleanly(clip)
        XCTAssertTrue(ok, "a killed recording still decodes: \(err)")
        XCTAssertGreaterThan(try probe(clip).format, 1.0, "it keeps all but the open fragment")
        try d.start()
        let (code, reply) = try d.ctl("tap")
        XCTAssertEqual(code, 0)
        let next = try XCTUnwrap((reply?["files"] as? [String])?.first)
        XCTAssertTrue(next.hasSuffix("SHTR0003.JPG"), "numbering continues after the clip: \(next)")
    }

    func testAnEmptyClipLeftByACrashIsRemovedAndItsNumberNotReused() throws {
        let d = try DaemonHarness()
        let dir = d.storage + "/DCIM/100SHUTR"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // A crash right after the storage reserved SHTR0005.MP4: the counter (written
        // ahead) already says 6, the file is empty.
        XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/SHTR0005.MP4", contents: Data()))
        try "next 100SHUTR/SHTR0006\n".write(toFile: d.storage + "/.shutter-counter", atomically: true, encoding: .utf8)
        try d.start()
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/SHTR0005.MP4"))
        let (code, reply) = try d.ctl("tap")
        XCTAssertEqual(code, 0, d.log())
        XCTAssertTrue(((reply?["files"] as? [String])?.first ?? "").hasSuffix("SHTR0006.JPG"), "\(String(describing: reply))")
    }

    func testSIGTERMDuringARecordingFinishesTheClipAndExitsZero() throws {
        let d = try DaemonHarness()
        try d.start()
        XCTAssertEqual(try d.ctl("press").0, 0)
        try d.waitFor("recording", timeout: 10) { try d.status()["state"] as? String == "recording" }
        usleep(1_500_000)
        d.signal(SIGTERM)
        XCTAssertEqual(d.waitExit(), 0, d.log())
        let clip = try XCTUnwrap(d.files("MP4").first)
        let (ok, err) = try decodesCleanly(clip)
        XCTAssertTrue(ok, err)
        XCTAssertEqual(try probe(clip).format, 2.5, accuracy: 0.6)
    }

    func testSignalsTakeAPhotoAndToggleARecording() throws {
        let d = try DaemonHarness()
        try d.start()
        d.signal(SIGUSR1)
        try d.waitFor("photo", timeout: 20) { d.files("JPG").count == 1 }
        d.signal(SIGUSR2)
        try d.waitFor("recording", timeout: 10) { try d.status()["state"] as? String == "recording" }
        usleep(1_200_000)
        d.signal(SIGUSR2)
        try d.waitFor("clip", timeout: 20) { (try d.counters()["clips"] ?? 0) == 1 }
        XCTAssertEqual(d.files("MP4").count, 1)
    }

    func testMalformedControlRequestsGetErrorsAndTheServiceStaysUp() throws {
        let d = try DaemonHarness()
        try d.start()
        for bad in ["not json\n", "{\"cmd\":\"explode\"}\n", "{\"cmd\":\"hold\"}\n", "\n", String(repeating: "x", count: 70_000)] {
            let reply = try rawRequest(d.socket, bad)
            XCTAssertTrue(reply.contains("\"ok\":false"), "\(bad.prefix(20)): \(reply)")
        }
        XCTAssertEqual(try d.status()["state"] as? String, "idle")
        var st = stat()
        XCTAssertEqual(stat(d.socket, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o660, "control socket mode 0660")
    }

    func testCameraStallIsRestartedWithBackoffShownOnTheLEDAndRecovers() throws {
        let d = try DaemonHarness(config: #"{"watchdog": {"frameTimeoutMs": 300, "restartBackoffMs": 200, "maxRestarts": 50}}"#)
        try d.start()
        XCTAssertEqual(try d.ctl("sim", "--fault", "stall").0, 0)
        try d.waitFor("camera-unavailable", timeout: 15) { try d.status()["state"] as? String == "camera-unavailable" }
        try d.waitFor("two restarts", timeout: 15) { (try d.counters()["cameraRestarts"] ?? 0) >= 2 }
        let leds = try d.status()["leds"] as? [String: [String: Any]]
        XCTAssertEqual(leds?["status"]?["pattern"] as? String, "error", "the status LED blinks the no-camera code")
        let (refused, _) = try d.ctl("tap")
        XCTAssertNotEqual(refused, 0, "no photo without a camera")
        XCTAssertEqual(try d.ctl("sim", "--fault", "none").0, 0)
        try d.waitFor("recovered", timeout: 20) { try d.status()["state"] as? String == "idle" }
        let (code, reply) = try d.ctl("tap")
        XCTAssertEqual(code, 0, d.log())
        XCTAssertEqual((reply?["files"] as? [String])?.count, 1)
    }

    func testWatchdogGivesUpAfterTheConfiguredRestarts() throws {
        let d = try DaemonHarness(config: #"{"watchdog": {"frameTimeoutMs": 200, "restartBackoffMs": 100, "maxRestarts": 2}}"#)
        try d.start()
        XCTAssertEqual(try d.ctl("sim", "--fault", "stall").0, 0)
        let code = d.waitExit(timeout: 60)
        XCTAssertNotNil(code, "shutterd exits so systemd restarts it")
        XCTAssertNotEqual(code, 0)
        XCTAssertTrue(d.log().contains("giving up"), d.log())
    }

    /// Issue 11: a setting changed through shutterctl holds across a restart of
    /// the daemon (the state file) until `reset` returns it to the config file's value.
    func testASettingSurvivesARestartUntilReset() throws {
        let d = try DaemonHarness(config: #"{"camera": {"exposure": {"ev": 0.5}}}"#)
        try d.start()
        let (setCode, set) = try d.ctl("set", "camera.exposure.ev", "2")
        XCTAssertEqual(setCode, 0, d.log())
        XCTAssertEqual(set?["value"] as? Double, 2)
        let (_, got) = try d.ctl("get", "camera.exposure.ev")
        XCTAssertEqual(got?["value"] as? Double, 2)
        XCTAssertEqual(got?["source"] as? String, "runtime")
        XCTAssertEqual(got?["effective"] as? Double, 2, "the running camera has it")

        d.stop()
        try d.start()
        let (_, again) = try d.ctl("get", "camera.exposure.ev")
        XCTAssertEqual(again?["value"] as? Double, 2, "remembered across the restart: \(d.log())")
        XCTAssertEqual(again?["source"] as? String, "runtime")
        let asked = ((try d.status()["camera"] as? [String: Any])?["asked"] as? [String: Any])?["exposure"] as? [String: Any]
        XCTAssertEqual(asked?["ev"] as? Double, 2, "the camera started with it")

        let (resetCode, _) = try d.ctl("reset", "camera.exposure.ev")
        XCTAssertEqual(resetCode, 0, d.log())
        let (_, after) = try d.ctl("get", "camera.exposure.ev")
        XCTAssertEqual(after?["value"] as? Double, 0.5, "the config file's value")
        XCTAssertEqual(after?["source"] as? String, "config")

        let (badCode, _) = try d.ctl("set", "camera.exposure.ev", "9")
        XCTAssertEqual(badCode, 1, "a bad value is refused")
    }

    private func rawRequest(_ socket: String, _ text: String) throws -> String {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in socket.utf8.enumerated().forEach { raw[$0.offset] = $0.element } }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else { throw HarnessError("connect failed") }
        _ = text.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        shutdown(fd, Int32(SHUT_WR))
        var buf = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buf, buf.count, 0)
        return n > 0 ? String(decoding: buf[0..<n], as: UTF8.self) : ""
    }
}
