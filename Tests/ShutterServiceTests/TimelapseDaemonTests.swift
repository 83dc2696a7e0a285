// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// `shutterctl timelapse` against the real `shutterd` on the simulated board: the film of
/// the photos taken, chosen by the day they were taken and a number, its progress on
/// stderr, its path on stdout; the errors with exit status 1.
final class TimelapseDaemonTests: XCTestCase {
    /// shutterctl's exit status, stdout and stderr.
    func ctl(_ h: DaemonHarness, _ args: [String]) throws -> (Int32, String, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: DaemonHarness.binDir + "/shutterctl")
        p.arguments = ["--socket", h.socket] + args
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    func testShutterctlTimelapseMakesAFilmOfTheDaysPhotosAndSaysHowFarItIs() throws {
        let h = try DaemonHarness()
        try h.start()
        defer { h.stop() }
        var shots: [String] = []
        for _ in 0..<4 {
            let (code, obj) = try h.ctl("tap")
            XCTAssertEqual(code, 0)
            shots.append(try XCTUnwrap((obj?["files"] as? [String])?.first))
        }
        // The day the first was taken, in local time (shutterd's zone is this process's), to the last's number.
        let modified = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: shots[0])[.modificationDate] as? Date)
        let day = DateFormatter()
        day.dateFormat = "yyyy-MM-dd"
        day.timeZone = .current
        let last = TimelapseServiceTests.number(shots[3])
        let (code, out, err) = try ctl(h, ["timelapse", "--from", day.string(from: modified), "--to", String(last), "--fps", "4"])
        XCTAssertEqual(code, 0, "\(out)\n\(err)\n\(h.log().suffix(2000))")
        XCTAssertTrue(err.contains("timelapse: 4 of 4 photos"), "progress on stderr: \(err)")
        let reply = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any], out)
        let film = try XCTUnwrap((reply["files"] as? [String])?.first, out)
        XCTAssertTrue(film.hasSuffix("/DCIM/timelapse-\(TimelapseServiceTests.number(shots[0]))-\(last).MP4"), film)
        XCTAssertEqual((reply["timelapse"] as? [String: Any])?["frames"] as? Int, 4, out)
        let s = try TimelapseServiceTests.stream(film)
        XCTAssertEqual(s["nb_read_frames"] as? String, "4")
        XCTAssertEqual(s["r_frame_rate"] as? String, "4/1")
        XCTAssertEqual(try decodesCleanly(film).0, true)
        // The same film again: its name is taken; never replaced.
        let (again, _, againErr) = try ctl(h, ["timelapse", "--from", day.string(from: modified), "--to", String(last)])
        XCTAssertEqual(again, 1)
        XCTAssertTrue(againErr.contains("exists already"), againErr)
        // No photos in the range, a bound that does not read: exit status 1, in words.
        let (none, _, noneErr) = try ctl(h, ["timelapse", "--to", "2000-01-01"])
        XCTAssertEqual(none, 1)
        XCTAssertTrue(noneErr.contains("no photos up to 2000-01-01"), noneErr)
        let (bad, _, badErr) = try ctl(h, ["timelapse", "--from", "yesterday"])
        XCTAssertEqual(bad, 1)
        XCTAssertTrue(badErr.contains("is neither"), badErr)
        let (usage, _, _) = try ctl(h, ["timelapse", "--speed", "2"])
        XCTAssertEqual(usage, 64)
        h.checkNoCritical()
    }
}
