// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
@testable import ShutterService

/// The real shutterd on the simulated board, driven only through shutterctl, the
/// control socket and signals: what is about the process (signals, kill -9, the
/// socket, the command line). Capture semantics run in this process on the manual
/// clock (CaptureInProcessTests and the other InProcessRig tests).
final class EndToEndTests: XCTestCase {
    func testSIGKILLMidHoldLeavesAPlayableClipAndARestartContinuesTheNumbering() throws {
        let d = try DaemonHarness()
        try d.start()
        XCTAssertEqual(try d.ctl("tap").0, 0)
        XCTAssertEqual(try d.ctl("press").0, 0)
        try d.waitFor("recording", timeout: 10) { try d.status()["state"] as? String == "recording" }
        // Killed once shutterd says a second of the clip is on the card (its durable line).
        try d.waitFor("a second durable", timeout: 60) { (Self.durableSeconds(d.log()) ?? 0) >= 1 }
        d.signal(SIGKILL)
        d.waitExit()
        let said = try XCTUnwrap(Self.durableSeconds(d.log()), d.log())
        let clips = d.files("MP4")
        XCTAssertEqual(clips.count, 1, d.log())
        let clip = try XCTUnwrap(clips.first)
        let (ok, err) = try decodesCleanly(clip)
        XCTAssertTrue(ok, "a killed recording still decodes: \(err)")
        let kept = try probe(clip).format
        print("SIGKILL mid-hold: the clip keeps \(kept) s; shutterd's last durable line said \(said) s")
        XCTAssertGreaterThanOrEqual(kept + 0.05, said, "it keeps all that shutterd reported durable")
        try d.start()
        let (code, reply) = try d.ctl("tap")
        XCTAssertEqual(code, 0)
        let next = try XCTUnwrap((reply?["files"] as? [String])?.first)
        XCTAssertTrue(next.hasSuffix("SHTR0003.JPG"), "numbering continues after the clip: \(next)")
    }

    func testSIGTERMDuringARecordingFinishesTheClipAndExitsZero() throws {
        let d = try DaemonHarness()
        try d.start()
        XCTAssertEqual(try d.ctl("press").0, 0)
        // Stopped once shutterd says the recording runs 2 s from its press (past the 1 s hold).
        var elapsed = 0.0
        try d.waitFor("2 s recorded", timeout: 60) {
            elapsed = (try d.status()["recording"] as? [String: Any])?["elapsedSeconds"] as? Double ?? 0
            return elapsed >= 2
        }
        d.signal(SIGTERM)
        XCTAssertEqual(d.waitExit(), 0, d.log())
        let clip = try XCTUnwrap(d.files("MP4").first)
        let (ok, err) = try decodesCleanly(clip)
        XCTAssertTrue(ok, err)
        // What the clip holds is what shutterd says it saved, and at least what it said it had recorded.
        let savedMs = try XCTUnwrap(EndToEndRegularClipTests.savedMilliseconds(d.log()), "a clip saved line\n\(d.log())")
        let seconds = try probe(clip).format
        print("SIGTERM mid-recording: \(elapsed) s recorded at the signal, \(savedMs) ms saved, the clip \(seconds) s")
        XCTAssertEqual(seconds, Double(savedMs) / 1000, accuracy: 0.1, "the clip is as long as shutterd said it saved")
        XCTAssertGreaterThanOrEqual(Double(savedMs) / 1000 + 0.1, elapsed, "the clip holds what was recorded before the signal")
    }

    /// The media time of the newest `durable: PATH to X s (...)` line of the log.
    static func durableSeconds(_ log: String) -> Double? {
        guard let line = log.split(separator: "\n").last(where: { $0.contains("durable: ") && $0.contains(" to ") }),
              let r = line.range(of: " to ") else { return nil }
        return Double(line[r.upperBound...].prefix { $0 != " " })
    }

    func testSignalsTakeAPhotoAndToggleARecording() throws {
        let d = try DaemonHarness()
        try d.start()
        d.signal(SIGUSR1)
        try d.waitFor("photo", timeout: 20) { d.files("JPG").count == 1 }
        d.signal(SIGUSR2)
        // Toggled off once shutterd says a second is recorded (the bound only limits a hang).
        try d.waitFor("1 s recorded", timeout: 60) {
            ((try d.status()["recording"] as? [String: Any])?["elapsedSeconds"] as? Double ?? 0) >= 1
        }
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

    /// 20 clients on the control socket at once, each its own shutterctl: each tap
    /// is answered with its own file or refused as busy, and the card holds exactly
    /// the files the replies name.
    func testTwentyConcurrentTapsOnTheSocketAreEachAnsweredWithTheirOwnFile() throws {
        let d = try DaemonHarness(config: #"{"still": {"width": 640, "height": 480}, "shutdown": {"taps": 0}}"#)
        try d.start()
        let book = OutcomeBook(socket: d.socket)
        let group = DispatchGroup()
        for _ in 0..<20 { DispatchQueue.global().async(group: group) { book.run("tap", bound: 50, ["tap"]) } }
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success, "clients finished")
        let outcomes = book.all
        XCTAssertEqual(outcomes.count, 20)
        let named = outcomes.flatMap(\.files)
        XCTAssertEqual(Set(named).count, named.count, "no file is named by two replies: \(named.sorted())")
        XCTAssertEqual(Set(d.files("JPG") + d.files("MP4")), Set(named), "the card holds exactly the named files")
        for o in outcomes {
            if o.ok {
                XCTAssertEqual(o.files.count, 1, "\(o.files)")
            } else {
                XCTAssertTrue((o.error ?? "").hasPrefix("busy: "), o.error ?? "")
            }
        }
        XCTAssertGreaterThanOrEqual(named.count, 1)
        print("20 taps on the socket: \(named.count) photos, \(outcomes.count - named.count) refused as busy")
        XCTAssertEqual(try d.status()["state"] as? String, "idle")
    }

    /// shutterctl's own checks of its arguments, before anything is sent.
    func testShutterctlRefusesBadArgumentsNamingWhatIsAllowed() throws {
        let d = try DaemonHarness()
        try d.start()
        XCTAssertEqual(try d.ctl("camera", "0", "1").0, 64, "one argument at most")
        for args in [["1.5", "0.5"], ["0.5", "-1"], ["abc", "0.5"], ["0.5"], [], ["0.5", "0.5", "0.5"], ["nan", "0"]] {
            let (code, _, err) = try runTool(DaemonHarness.binDir + "/shutterctl", ["--socket", d.socket, "focus"] + args)
            XCTAssertEqual(code, 1, "focus \(args): \(err)")
            XCTAssertTrue(err.contains("each a number from 0 to 1"), "focus \(args): \(err)")
        }
        let (setCode, _) = try d.ctl("set", "camera.exposure.ev", "9")
        XCTAssertEqual(setCode, 1, "a bad value is refused")
        let (_, got) = try d.ctl("get", "camera.exposure.ev")
        XCTAssertEqual(got?["source"] as? String, "config", "nothing changed")
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
