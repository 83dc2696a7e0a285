// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterMedia
import XCTest

/// The upload issue's faults that are not the link's: a remote that refuses (wrong password,
/// read-only, full) says why in `status.upload` and keeps the queue until it is fixed; a clip
/// cut by a kill of shutterd is uploaded once, after its restart has finished it, never as
/// the fragmented file it was at the kill. (An extension: the same helpers, test names under
/// UploadTests.)
extension UploadTests {
    /// Waits for a failure in status, then checks the queue is kept and nothing verified.
    func assertRefused(_ d: DaemonHarness, _ remote: UploadRemote, files: Int, _ words: [String], _ what: String) throws -> String {
        try d.waitFor("\(what): the failure reported", timeout: 120) { (try upload(d)["lastError"] as? String) != nil }
        let u = try upload(d)
        let error = u["lastError"] as? String ?? ""
        print("upload, \(what): \(error)")
        XCTAssertEqual(u["waitingFiles"] as? Int, files, "\(what): the queue is kept")
        XCTAssertEqual(u["verifiedFiles"] as? Int ?? 0, 0, "\(what): nothing verified")
        XCTAssertTrue(error.contains("\"r\""), "\(what): the error names the remote: \(error)")
        for w in words { XCTAssertTrue(error.lowercased().contains(w), "\(what): the error says \"\(w)\": \(error)") }
        XCTAssertEqual(try assertFinalsAreWhole(remote, try card(d), what), 0, "\(what): nothing under a final name")
        return error
    }

    /// Three photos queued together (uploads paused while they are taken).
    func threePhotos(_ d: DaemonHarness) throws {
        XCTAssertEqual(try d.ctl("upload", "pause").0, 0)
        for _ in 0..<3 { XCTAssertEqual(try d.ctl("tap").0, 0) }
        XCTAssertEqual(try d.ctl("upload", "resume").0, 0)
    }

    /// The password in rclone.conf is wrong: an error naming the remote and the refusal; the
    /// right one (the file fixed, shutterd restarted as a user would) sends everything.
    func testWrongCredentialsNameTheRemoteAndKeepTheQueue() throws {
        let remote = try UploadRemote(.sftp)
        let good = try String(contentsOfFile: remote.config, encoding: .utf8)
        let (_, obscured, _) = try remote.rclone(["obscure", "not-the-password"])
        let wrong = remote.dir + "/wrong.conf"
        try good.replacingOccurrences(of: #"pass = .*"#, with: "pass = " + obscured.trimmingCharacters(in: .whitespacesAndNewlines),
                                      options: .regularExpression).write(toFile: wrong, atomically: true, encoding: .utf8)
        let d = try daemon(remote, config: wrong)
        defer { d.stop() }
        try threePhotos(d)
        _ = try assertRefused(d, remote, files: 3, ["refused the login", "upload.rcloneconfig"], "wrong password")
        d.stop()
        try good.write(toFile: wrong, atomically: true, encoding: .utf8)
        try d.start()
        try waitVerified(d, 3)
        XCTAssertEqual(try assertFinalsAreWhole(remote, try card(d), "the password fixed"), 3)
    }

    /// The server refuses writes (`rclone serve sftp --read-only`): the error says so, the queue
    /// is kept; writable again, every file is verified without a restart.
    func testReadOnlyRemoteKeepsTheQueue() throws {
        let remote = try UploadRemote(.sftp)
        remote.stop()
        remote.serveArgs = ["--read-only"]
        try remote.start()
        let d = try daemon(remote)
        defer { d.stop() }
        try threePhotos(d)
        _ = try assertRefused(d, remote, files: 3, ["read only", "does not let this user write"], "read-only remote")
        remote.stop()
        remote.serveArgs = []
        try remote.start()
        XCTAssertEqual(try d.ctl("upload", "retry").0, 0)
        try waitVerified(d, 3)
        XCTAssertEqual(try assertFinalsAreWhole(remote, try card(d), "writable again"), 3)
        XCTAssertNil(try upload(d)["lastError"], "a success clears the error")
    }

    /// The server's disk is full (its folder a 1 MiB tmpfs filled by another file): the error
    /// says so, nothing partial is left under a final name, the queue is kept; with room (that
    /// file deleted, the tmpfs grown), every file is verified.
    func testFullRemoteKeepsTheQueue() throws {
        guard getuid() == 0 else { throw XCTSkip("mounting a tmpfs needs root") }
        let remote = try UploadRemote(.sftp)
        XCTAssertEqual(try runTool("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", remote.served]).0, 0)
        defer { _ = try? runTool("umount", ["-l", remote.served]) }
        let filler = remote.served + "/filler"
        _ = try runTool("dd", ["if=/dev/zero", "of=" + filler, "bs=4k"])  // until the tmpfs is full
        let d = try daemon(remote)
        defer { d.stop() }
        try threePhotos(d)
        _ = try assertRefused(d, remote, files: 3, ["space", "the remote is full"], "full remote")
        try FileManager.default.removeItem(atPath: filler)
        XCTAssertEqual(try runTool("mount", ["-o", "remount,size=64m", remote.served]).0, 0)
        XCTAssertEqual(try d.ctl("upload", "retry").0, 0)
        try waitVerified(d, 3)
        XCTAssertEqual(try assertFinalsAreWhole(remote, try card(d), "with room"), 3)
    }

    /// shutterd killed (SIGKILL) 3 s into a clip, with uploads running: the fragmented file is
    /// not sent; after the restart finishes it, the regular MP4 is uploaded once, byte for byte.
    func testAClipCutByAKillIsUploadedOnceFinished() throws {
        let remote = try UploadRemote(.sftp)
        let d = try daemon(remote)
        defer { d.stop() }
        XCTAssertEqual(try d.ctl("tap").0, 0)
        try waitVerified(d, 1)
        XCTAssertEqual(try d.ctl("record", "start").0, 0)
        try d.waitFor("3 s recorded", timeout: 60) {
            ((try d.status()["recording"] as? [String: Any])?["elapsedSeconds"] as? Double ?? 0) >= 3
        }
        // Long enough for a few of the uploader's 5 s wakes to see the growing file.
        Thread.sleep(forTimeInterval: 6)
        d.signal(SIGKILL)
        _ = d.waitExit()
        let clip = try XCTUnwrap(d.files("MP4").first)
        XCTAssertTrue(try RegularMP4.isFragmented(clip), "fragmented at the kill")
        XCTAssertEqual(try remote.files().final.count, 1, "only the photo on the remote: the growing clip was not sent")
        try d.start()
        try d.waitFor("the recovered clip finished", timeout: 60) { try !RegularMP4.isFragmented(clip) }
        try waitVerified(d, 2)
        let (finals, incoming) = try remote.files()
        XCTAssertEqual(try assertFinalsAreWhole(remote, try card(d), "after the restart"), 2)
        XCTAssertEqual(incoming, [])
        let copy = try XCTUnwrap(finals.keys.first { $0.hasSuffix(".MP4") })
        let back = remote.dir + "/clip-back.MP4"
        XCTAssertEqual(try remote.rclone(["copyto", remote.remote + "/" + copy, back]).0, 0)
        XCTAssertFalse(try RegularMP4.isFragmented(back), "the remote's clip is the finished regular MP4")
        print("upload: a clip cut by kill -9 3 s in: not sent while fragmented; after the restart \(copy) on the "
              + "remote, regular, byte-identical to the card's")
    }

    /// A copy the remote lost after it was verified (what a power cut does to a server, or to a
    /// disk of this machine, that had not yet written it) is found when the uploader starts
    /// again, and sent again: it is never left "verified" for a deletion to trust.
    func testACopyLostAfterItsCheckIsSentAgainAfterARestart() throws {
        let remote = try UploadRemote(.sftp)
        let d = try daemon(remote)
        defer { d.stop() }
        for _ in 0..<3 { XCTAssertEqual(try d.ctl("tap").0, 0) }
        try waitVerified(d, 3)
        d.stop()
        // What the cut left: the name, committed, over data that never reached the disk.
        let (finals, _) = try remote.files()
        let lost = try XCTUnwrap(finals.keys.sorted().last)
        let path = remote.served + "/camera/garden/" + lost
        XCTAssertEqual(truncate(path, 0), 0, "truncate \(path)")
        try d.start()
        try d.waitFor("the lost copy sent again", timeout: 120) {
            (try? UploadRemote.sha256(path)) == (try card(d))[URL(fileURLWithPath: lost).lastPathComponent]
        }
        try waitVerified(d, 3)
        XCTAssertEqual(try assertFinalsAreWhole(remote, try card(d), "after the restart"), 3, "under the same names")
        let log = d.log()
        XCTAssertTrue(log.contains("\(lost) has") && log.contains("when looked at again after a restart"),
                      "the log names the copy that was not whole")
        XCTAssertTrue(log.contains("1 not whole, sent again"), "the log counts it")
        print("upload: a verified copy truncated to 0 bytes while the service was stopped: found at the start, "
              + "\(lost) sent again and verified")
    }

    /// A file under a verified copy's name that is larger than the card's file is not a copy of
    /// ours cut short: the start's second look leaves it there and sends ours again beside it.
    func testALargerFileUnderACopysNameIsLeftAndOursSentBesideIt() throws {
        let remote = try UploadRemote(.sftp)
        let d = try daemon(remote)
        defer { d.stop() }
        XCTAssertEqual(try d.ctl("tap").0, 0)
        try waitVerified(d, 1)
        d.stop()
        let name = try XCTUnwrap(try remote.files().final.keys.first)
        let path = remote.served + "/camera/garden/" + name
        // Written through the server, as a person would (behind its back its listing keeps the old size).
        let theirs = remote.dir + "/theirs.JPG"
        try (try Data(contentsOf: URL(fileURLWithPath: path)) + Data("not the camera's".utf8)).write(to: URL(fileURLWithPath: theirs))
        XCTAssertEqual(try remote.rclone(["copyto", theirs, remote.remote + "/" + name]).0, 0)
        let before = try UploadRemote.sha256(theirs)
        try d.start()
        let beside = path.replacingOccurrences(of: ".JPG", with: "-2.JPG")
        let card = try XCTUnwrap(try card(d).values.first)
        try d.waitFor("ours sent again beside it", timeout: 120) { (try? UploadRemote.sha256(beside)) == card }
        try waitVerified(d, 1)
        XCTAssertEqual(try UploadRemote.sha256(path), before, "the larger file under the name is left as it was")
    }

    /// A remote that is a folder of this machine (rclone's local backend, e.g. a USB disk):
    /// the copies are verified there, written to the disk before (the debug log says so).
    func testALocalFolderRemote() throws {
        let dir = try DaemonHarness.makeTempDir()
        let config = dir + "/rclone.conf"
        try "[usb]\ntype = local\n".write(toFile: config, atomically: true, encoding: .utf8)
        let d = try DaemonHarness(config: """
            {"upload": {"enabled": true, "remote": "usb:\(dir)/camera", "rcloneConfig": "\(config)"},
             "video": {"prerollSeconds": 0, "width": 640, "height": 360}}
            """, extraArgs: ["--log-level", "debug"])
        try d.start()
        defer { d.stop() }
        for _ in 0..<2 { XCTAssertEqual(try d.ctl("tap").0, 0) }
        try waitVerified(d, 2)
        for (name, sha) in try card(d) {
            let copies = (FileManager.default.enumerator(atPath: dir + "/camera")?.allObjects as? [String] ?? [])
                .filter { $0.hasSuffix("/" + name) && !$0.contains(".shutter-incoming") }
            XCTAssertEqual(copies.count, 1, "\(name) once under camera/")
            XCTAssertEqual(try UploadRemote.sha256(dir + "/camera/" + (copies.first ?? "")), sha)
        }
        XCTAssertTrue(d.log().contains("written to the disk"), "the copies on the local remote were synced")
    }
}
