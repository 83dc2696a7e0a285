// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// The webhook on the real shutterd (simulated board) against a real HTTP server on
/// loopback (Tests/webhook/receiver.py): down at first, then failing (500), then slower
/// than webhook.timeoutSeconds, then well. Every event reaches it once it is back, in the
/// order of the captures, with its thumbnail; none is acknowledged twice (a repeat comes
/// only after an answer the camera never got, with the same X-Shutter-Event-Id).
final class WebhookTests: XCTestCase {
    static let receiver = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("webhook/receiver.py").path

    func requests(_ dir: String) -> [[String: Any]] {
        let text = (try? String(contentsOfFile: dir + "/requests.jsonl", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    func testEveryEventArrivesOnceTheReceiverIsBackAndNoneIsAcknowledgedTwice() throws {
        let port = try MQTTBroker.freePort()
        let dir = try DaemonHarness.makeTempDir()
        let d = try DaemonHarness(config: """
            {"webhook": {"enabled": true, "url": "http://127.0.0.1:\(port)/hook", "attach": "thumbnail",
                         "timeoutSeconds": 2},
             "mqtt": {"name": "shed"}, "video": {"prerollSeconds": 0, "width": 640, "height": 360}}
            """)
        try d.start()
        defer { d.stop() }
        // Down: three photos wait on the card.
        for _ in 0..<3 { XCTAssertEqual(try d.ctl("tap").0, 0) }
        try d.waitFor("the failure said", timeout: 30) { d.log().contains("webhook: ") && d.log().contains("127.0.0.1") }
        let queued = try FileManager.default.contentsOfDirectory(atPath: d.storage + "/.webhook").filter { $0.hasSuffix(".json") }
        XCTAssertEqual(queued.count, 3, "three events kept on the card")
        let last = try d.status()["lastError"] as? String ?? ""
        print("webhook down: \(last)")
        XCTAssertTrue(last.contains("webhook"), last)
        // Up, failing.
        try "fail".write(toFile: dir + "/mode", atomically: true, encoding: .utf8)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        server.arguments = [Self.receiver, "\(port)", dir]
        try server.run()
        defer { server.terminate(); server.waitUntilExit() }
        try d.waitFor("two failed posts", timeout: 60) { requests(dir).filter { $0["code"] as? Int == 500 }.count >= 2 }
        // Slower than the timeout: the answer never reaches the camera, which tries again.
        try "slow".write(toFile: dir + "/mode", atomically: true, encoding: .utf8)
        try d.waitFor("a post timed out", timeout: 60) { requests(dir).contains { $0["mode"] as? String == "slow" } }
        // Well: every event arrives.
        try "ok".write(toFile: dir + "/mode", atomically: true, encoding: .utf8)
        XCTAssertEqual(try d.ctl("tap").0, 0)
        XCTAssertEqual(try d.ctl("hold", "2").0, 0)
        try d.waitFor("the queue empty", timeout: 120) {
            ((try? FileManager.default.contentsOfDirectory(atPath: d.storage + "/.webhook")) ?? ["x"])
                .filter { $0.hasSuffix(".json") }.isEmpty
        }
        let all = requests(dir)
        let acked = all.filter { $0["code"] as? Int == 200 && $0["delivered"] as? Bool == true }
        let ids = acked.compactMap { $0["id"] as? String }
        print("webhook: \(all.count) requests (\(all.filter { $0["code"] as? Int == 500 }.count) answered 500, "
              + "\(all.filter { $0["mode"] as? String == "slow" }.count) slower than the timeout), \(ids.count) acknowledged")
        XCTAssertEqual(Set(ids).count, ids.count, "no event acknowledged twice: \(ids)")
        XCTAssertEqual(Set(ids).count, 5, "four photos and a clip: \(ids)")
        let events = acked.compactMap { $0["event"] as? [String: Any] }
        XCTAssertEqual(events.map { $0["event"] as? String ?? "?" }.sorted(), ["clip", "photo", "photo", "photo", "photo"])
        XCTAssertEqual(Set(events.compactMap { $0["camera"] as? String }), ["shed"])
        XCTAssertEqual(events.compactMap { $0["file"] as? String }.filter { $0.hasSuffix(".JPG") }.sorted(),
                       ["SHTR0001.JPG", "SHTR0002.JPG", "SHTR0003.JPG", "SHTR0004.JPG"], "in order, every photo")
        for r in acked where (r["event"] as? [String: Any])?["event"] as? String == "photo" {
            XCTAssertEqual(r["type"] as? String, "multipart/form-data")
            XCTAssertGreaterThan(r["file_bytes"] as? Int ?? 0, 1000, "the thumbnail attached")
        }
        // Every repeat of an id came after an answer the camera did not get (500 or too slow).
        for id in Set(all.compactMap { $0["id"] as? String }) {
            let tries = all.filter { $0["id"] as? String == id }
            XCTAssertTrue(tries.dropLast().allSatisfy { $0["code"] as? Int == 500 || $0["mode"] as? String == "slow" },
                          "\(id) was sent again after an answer it got")
        }
        d.checkNoCritical()
    }
}

/// https: a receiver with a certificate of its own (a CA made here by openssl). Without
/// `webhook.caFile` curl refuses it (the system's CAs do not know it): the event waits on the
/// card and the error says why; with it, the waiting event and a new one arrive over TLS.
final class WebhookTLSTests: XCTestCase {
    func testAReceiversOwnCAInWebhookCaFile() throws {
        let dir = try DaemonHarness.makeTempDir()
        func openssl(_ args: [String]) throws {
            let (code, _, err) = try runTool("/usr/bin/openssl", args)
            XCTAssertEqual(code, 0, "openssl \(args.first ?? ""): \(err)")
        }
        try openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Shutter test CA",
                     "-keyout", dir + "/ca.key", "-out", dir + "/ca.pem"])
        try openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                     "-keyout", dir + "/server.key", "-out", dir + "/server.csr"])
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: dir + "/san.ext", atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", dir + "/server.csr", "-CA", dir + "/ca.pem", "-CAkey", dir + "/ca.key",
                     "-CAcreateserial", "-days", "2", "-extfile", dir + "/san.ext", "-out", dir + "/server.pem"])
        let port = try MQTTBroker.freePort()
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        server.arguments = [WebhookTests.receiver, "\(port)", dir, dir + "/server.pem", dir + "/server.key"]
        try server.run()
        defer { server.terminate(); server.waitUntilExit() }
        let storage = dir + "/card"
        func config(_ ca: String) -> String {
            """
            {"webhook": {"enabled": true, "url": "https://127.0.0.1:\(port)/hook", "timeoutSeconds": 5\(ca)},
             "video": {"prerollSeconds": 0, "width": 640, "height": 360}}
            """
        }
        // The system's CAs: refused, kept.
        let a = try DaemonHarness(storage: storage, config: config(""))
        try a.start()
        XCTAssertEqual(try a.ctl("tap").0, 0)
        try a.waitFor("the TLS failure said", timeout: 60) { (try a.status()["lastError"] as? String ?? "").contains("webhook") }
        let said = try a.status()["lastError"] as? String ?? ""
        print("webhook, a CA the system does not know: \(said)")
        XCTAssertTrue(said.lowercased().contains("certificate"), said)
        a.stop()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: storage + "/.webhook").filter { $0.hasSuffix(".json") }.count, 1,
                       "the event waits on the card")
        // Its CA in webhook.caFile: both events over TLS.
        let b = try DaemonHarness(storage: storage, config: config(", \"caFile\": \"\(dir)/ca.pem\""))
        try b.start()
        defer { b.stop() }
        XCTAssertEqual(try b.ctl("tap").0, 0)
        try b.waitFor("the queue empty", timeout: 60) {
            ((try? FileManager.default.contentsOfDirectory(atPath: storage + "/.webhook")) ?? ["x"]).filter { $0.hasSuffix(".json") }.isEmpty
        }
        let text = (try? String(contentsOfFile: dir + "/requests.jsonl", encoding: .utf8)) ?? ""
        let files = text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .compactMap { ($0["event"] as? [String: Any])?["file"] as? String }
        XCTAssertEqual(files, ["SHTR0001.JPG", "SHTR0002.JPG"], "the waiting photo, then the new one, over https")
        // A CA file the service cannot read: the part says which key.
        let c = try DaemonHarness(config: config(", \"caFile\": \"\(dir)/missing.pem\""))
        try c.start()
        defer { c.stop() }
        try c.waitFor("the unreadable CA file said", timeout: 30) { (try c.status()["lastError"] as? String ?? "").contains("webhook.caFile") }
    }
}
