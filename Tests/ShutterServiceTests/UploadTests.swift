// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterWeb
import XCTest

/// Uploads on the real shutterd (simulated board) to real servers on loopback: Debian's
/// `rclone serve sftp` and `rclone serve webdav`, and moto's S3 server. Every verdict is
/// read from what the service reported (`shutterctl upload status`) and from the remote's
/// files read back through rclone and compared by sha256 with the card's.
final class UploadTests: XCTestCase {
    /// shutterd uploading to `remote`; `connector`: with `--no-connector` (the connector,
    /// started apart, runs the uploads).
    func daemon(_ remote: UploadRemote, upload extra: String = "", connector: Bool = false,
                config: String? = nil, web: Bool = false, video: String = "\"width\": 640, \"height\": 360") throws -> DaemonHarness {
        let page = web ? "\"web\": {\"enabled\": true, \"listen\": \"127.0.0.1:0\", \"passwordHash\": "
            + "\"\(try XCTUnwrap(PasswordHash.make(WebScripts.password)))\"}, " : ""
        let d = try DaemonHarness(config: """
            {\(page)"upload": {"enabled": true, "remote": "\(remote.remote)", "rcloneConfig": "\(config ?? remote.config)"\(extra)},
             "video": {"prerollSeconds": 0, \(video)}}
            """, extraArgs: connector ? ["--no-connector"] : [])
        try d.start()
        return d
    }

    func upload(_ d: DaemonHarness) throws -> [String: Any] {
        let (_, obj) = try d.ctl("upload", "status")
        return obj?["upload"] as? [String: Any] ?? [:]
    }

    /// Waits until `count` files are verified and none waits; returns the seconds it took.
    @discardableResult
    func waitVerified(_ d: DaemonHarness, _ count: Int, timeout: TimeInterval = 180) throws -> Double {
        let start = Date()
        try d.waitFor("\(count) files verified", timeout: timeout) {
            let u = try upload(d)
            return (u["verifiedFiles"] as? Int ?? 0) >= count && (u["waitingFiles"] as? Int ?? 1) == 0
        }
        return Date().timeIntervalSince(start)
    }

    /// The card's photos and clips: file name → sha256.
    func card(_ d: DaemonHarness) throws -> [String: String] {
        var out: [String: String] = [:]
        for path in d.files("JPG") + d.files("MP4") {
            out[URL(fileURLWithPath: path).lastPathComponent] = try UploadRemote.sha256(path)
        }
        return out
    }

    /// Every remote file under a final name is a card file, byte for byte (by name).
    func assertFinalsAreWhole(_ remote: UploadRemote, _ card: [String: String], _ what: String) throws -> Int {
        let (finals, _) = try remote.files()
        for (path, sha) in finals {
            let name = URL(fileURLWithPath: path).lastPathComponent
            XCTAssertEqual(sha, card[name], "\(what): \(path) on the remote is not the card's \(name)")
        }
        return finals.count
    }

    /// Four photos and a clip reach each server; every copy byte-identical to the card; the
    /// incoming folder empty; each record verified with the remote's hash (md5 on SFTP and
    /// S3; WebDAV from rclone serve has none: by size).
    func testEveryFileReachesSFTPWebDAVAndS3ByteForByte() throws {
        for kind in [UploadRemote.Kind.sftp, .webdav, .s3] {
            let remote = try UploadRemote(kind)
            let d = try daemon(remote, web: kind == .sftp)
            defer { d.stop() }
            for _ in 0..<4 { XCTAssertEqual(try d.ctl("tap").0, 0) }
            XCTAssertEqual(try d.ctl("hold", "2").0, 0)
            let took = try waitVerified(d, 5)
            let card = try card(d)
            XCTAssertEqual(card.count, 5)
            let (finals, incoming) = try remote.files()
            XCTAssertEqual(Set(finals.keys.map { URL(fileURLWithPath: $0).lastPathComponent }), Set(card.keys), "\(kind)")
            XCTAssertEqual(try assertFinalsAreWhole(remote, card, "\(kind)"), 5)
            XCTAssertEqual(incoming, [], "\(kind): copies left in the incoming folder")
            let records = try FileManager.default.contentsOfDirectory(atPath: d.storage + "/.upload").filter { $0.hasSuffix(".json") }
            XCTAssertEqual(records.count, 5)
            for r in records {
                let text = try String(contentsOfFile: d.storage + "/.upload/" + r, encoding: .utf8)
                XCTAssertTrue(text.contains("\"state\":\"verified\""), "\(kind) \(r): \(text)")
                XCTAssertTrue(text.contains(kind == .webdav ? "\"check\":\"size\"" : "\"check\":\"md5 "), "\(kind) \(r): \(text)")
            }
            if kind == .sftp {
                // The page's gallery marks each file with a verified copy.
                let token = try LiveRTSPTests.addToken(d, "gallery")
                let script = """
                    import json, sys, urllib.request
                    r = urllib.request.Request(sys.argv[1] + "/api/files?perPage=50", headers={"Authorization": "Bearer " + sys.argv[2]})
                    print(json.dumps([i.get("uploaded") for i in json.load(urllib.request.urlopen(r, timeout=30))["items"]]))
                    """
                let (_, out, err) = try runTool("python3", ["-c", script, try WebScripts.url(d), token])
                XCTAssertEqual(out.trimmingCharacters(in: .whitespacesAndNewlines), "[true, true, true, true, true]", err)
                // A file deleted on the card: its record goes, its copy stays on the remote.
                XCTAssertEqual(try d.ctl("delete", "1000001").0, 0)
                try d.waitFor("the record of a deleted file gone", timeout: 30) {
                    !FileManager.default.fileExists(atPath: d.storage + "/.upload/1000001.json")
                }
                XCTAssertEqual(try remote.files().final.count, 5, "nothing deleted on the remote")
            }
            print("upload \(kind): 5 files verified \(String(format: "%.1f", took)) s after the clip; remote \(remote.remote)")
            d.checkNoCritical()
        }
    }

    /// The server goes away in the middle of a batch (slowed by upload.bandwidth) for
    /// UPLOAD_DOWN_SECONDS (60): status says why and keeps the queue; back, every file is
    /// verified within 60 s (figure printed), every copy whole.
    func testServerGoneMidBatchThenBack() throws {
        let down = Double(ProcessInfo.processInfo.environment["UPLOAD_DOWN_SECONDS"] ?? "60") ?? 60
        let remote = try UploadRemote(.sftp)
        let d = try daemon(remote, upload: ", \"bandwidth\": \"100k\"")
        defer { d.stop() }
        XCTAssertEqual(try d.ctl("upload", "pause").0, 0)
        for _ in 0..<8 { XCTAssertEqual(try d.ctl("tap").0, 0) }
        XCTAssertEqual(try d.ctl("upload", "resume").0, 0)
        try d.waitFor("a batch under way", timeout: 60) { try upload(d)["current"] != nil }
        remote.stop()
        try d.waitFor("the failure reported", timeout: 120) { (try upload(d)["lastError"] as? String) != nil }
        let u = try upload(d)
        let error = u["lastError"] as? String ?? ""
        print("upload with the server gone: \(error)")
        XCTAssertGreaterThan(u["waitingFiles"] as? Int ?? 0, 0, "the queue is kept")
        XCTAssertTrue(error.contains("rclone") && error.contains("\"r\""), "the error names rclone and the remote: \(error)")
        Thread.sleep(forTimeInterval: down)
        try remote.start()
        let took = try waitVerified(d, 8, timeout: 240)
        print("upload: the server back after \(Int(down)) s: all 8 files verified \(String(format: "%.1f", took)) s later")
        XCTAssertLessThanOrEqual(took, 60, "every file verified within 60 s of the server's return")
        XCTAssertEqual(try assertFinalsAreWhole(remote, try card(d), "after the outage"), 8)
        XCTAssertNil(try upload(d)["lastError"], "a success clears the error")
    }

    /// The connector (the uploader's process, as shutterd-connector.service runs it) killed
    /// with SIGKILL (with its rclone, as systemd kills the unit's cgroup) at UPLOAD_KILLS
    /// (100) random moments of its batches (copy, check, move, check: 0.1...2.5 s after its
    /// start), four new photos every ten kills: after every tenth kill each file under a
    /// final name on the remote is the card's, byte for byte; at the end all are verified.
    func testKilledUploaderNeverLeavesAPartialFileUnderAFinalName() throws {
        let kills = Int(ProcessInfo.processInfo.environment["UPLOAD_KILLS"] ?? "100") ?? 100
        let remote = try UploadRemote(.sftp)
        let d = try daemon(remote, connector: true)
        defer { d.stop() }
        var rng = SystemRandomNumberGenerator()
        var finalsSeen = 0, checks = 0
        for i in 0..<kills {
            if i % 10 == 0 { for _ in 0..<4 { XCTAssertEqual(try d.ctl("tap").0, 0) } }
            let c = try startConnector(d)
            Thread.sleep(forTimeInterval: Double.random(in: 0.1...2.5, using: &rng))
            Self.killTree(c.processIdentifier)
            c.waitUntilExit()
            if i % 10 == 9 || i == kills - 1 {
                finalsSeen = try assertFinalsAreWhole(remote, try card(d), "after kill \(i + 1)")
                checks += 1
            }
        }
        let card = try card(d)
        let c = try startConnector(d)
        defer { c.terminate(); c.waitUntilExit() }
        try waitVerified(d, card.count, timeout: 240)
        XCTAssertEqual(try assertFinalsAreWhole(remote, card, "at the end"), card.count)
        print("upload: \(kills) kills of the connector mid-batch; \(checks) checks of the remote, \(finalsSeen) files under "
              + "final names at the last, every one whole; all \(card.count) verified after")
    }

    /// SIGKILL to `pid` and everything it started (its rclone), children first seen.
    static func killTree(_ pid: Int32) {
        var all: [Int32] = [pid], i = 0
        while i < all.count {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(all[i])/task")) ?? []
            for t in tasks {
                let text = (try? String(contentsOfFile: "/proc/\(all[i])/task/\(t)/children", encoding: .utf8)) ?? ""
                all += text.split(separator: " ").compactMap { Int32($0) }
            }
            i += 1
        }
        for p in all { kill(p, SIGKILL) }
    }

    /// `shutterd --connector` for `d`.
    func startConnector(_ d: DaemonHarness, _ extra: [String] = []) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: DaemonHarness.binDir + "/shutterd")
        p.arguments = ["--connector", "--config", d.dir + "/shutter.json",
                       "--storage", d.storage, "--control-socket", d.socket] + extra
        let log = FileHandle(forWritingAtPath: d.dir + "/connector.log") ?? {
            _ = FileManager.default.createFile(atPath: d.dir + "/connector.log", contents: nil)
            return FileHandle(forWritingAtPath: d.dir + "/connector.log")!
        }()
        log.seekToEndOfFile()
        p.standardOutput = log
        p.standardError = log
        try p.run()
        return p
    }

    /// A 1080p hold while a backlog of 1080p photos uploads keeps every frame and the sound, as
    /// one with the uploads paused: the service's dropped-frame counter unchanged and the
    /// audio's duration the same; ffprobe's frame counts of both are printed.
    func testAHoldWhileUploadingKeepsItsFramesAndSound() throws {
        let remote = try UploadRemote(.sftp)
        // 256 KiB/s: the backlog (20 photos and the first clip, 4-5 MB) is still going when the
        // second hold ends (at 1 MiB/s a CI machine sent it all within the hold).
        let d = try daemon(remote, upload: ", \"bandwidth\": \"256k\"", video: "\"width\": 1920, \"height\": 1080")
        defer { d.stop() }
        XCTAssertEqual(try d.ctl("upload", "pause").0, 0)
        for _ in 0..<20 { XCTAssertEqual(try d.ctl("tap").0, 0) }
        func hold() throws -> (frames: Int, audio: Double, dropped: Int) {
            let (code, obj) = try d.ctl("hold", "4")
            XCTAssertEqual(code, 0)
            let path = try XCTUnwrap((obj?["files"] as? [String])?.first)
            let (_, out, _) = try runTool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-count_packets",
                                                      "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", path])
            let frames = Int(out.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
            return (frames, try probe(path).streams["audio"]?.duration ?? -1, try d.counters()["droppedFrames"] ?? -1)
        }
        let quiet = try hold()
        XCTAssertEqual(try d.ctl("upload", "resume").0, 0)
        try d.waitFor("a batch under way", timeout: 60) { try upload(d)["current"] != nil }
        let busy = try hold()
        let during = try upload(d)
        XCTAssertNotNil(during["current"], "the uploads went on for the whole hold (\(during["waitingBytes"] ?? "?") bytes still waiting)")
        print("upload: a 4 s 1080p hold with uploads paused: \(quiet.frames) frames, \(quiet.audio) s of sound; "
              + "while uploading (\(during["waitingFiles"] ?? "?") files still waiting at its end): \(busy.frames) frames, \(busy.audio) s of sound; "
              + "dropped frames \(quiet.dropped) then \(busy.dropped)")
        // The verdict is the service's own count: every frame the camera gave was encoded (on a
        // starved machine the simulated camera itself makes fewer: a figure, printed above).
        XCTAssertEqual(busy.dropped, quiet.dropped, "no frame dropped while uploading")
        XCTAssertGreaterThanOrEqual(busy.audio, quiet.audio - 0.05, "the same sound while uploading")
        try waitVerified(d, 22)
    }

    /// Bad settings are refused at the start naming the key and what to do: no rclone, an
    /// unreadable configuration file, a remote it does not name.
    func testBadSettingsNameTheKey() throws {
        let remote = try UploadRemote(.sftp)
        let cases: [(String, String?, String)] = [
            (", \"rclone\": \"/usr/bin/no-rclone\"", nil, "upload.rclone"),
            ("", "/nonexistent/rclone.conf", "upload.rcloneConfig"),
        ]
        for (extra, config, key) in cases {
            let d = try daemon(remote, upload: extra, config: config)
            defer { d.stop() }
            try d.waitFor("the problem logged", timeout: 30) { d.log().contains(key) }
            let last = try d.status()["lastError"] as? String ?? ""
            XCTAssertTrue(last.contains(key), "status.lastError names \(key): \(last)")
            print("upload: \(key) refused: \(last)")
        }
        let d = try DaemonHarness(config: """
            {"upload": {"enabled": true, "remote": "elsewhere:camera", "rcloneConfig": "\(remote.config)"}}
            """)
        try d.start()
        defer { d.stop() }
        try d.waitFor("the remote refused", timeout: 30) { d.log().contains("no remote \"elsewhere\"") }
        XCTAssertTrue(d.log().contains("it has \"r\""), d.log().suffix(2000).description)
    }
}
