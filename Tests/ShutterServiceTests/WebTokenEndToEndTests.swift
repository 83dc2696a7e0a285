// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterWeb
import XCTest

/// API tokens and the still-image URL on the real shutterd (simulated board, page on):
/// `shutterctl web-token` for the tokens, Tests/web/test_web_tokens.py for what they may
/// do over HTTP, Tests/web/home_assistant.py for the Home Assistant configuration in docs/home-automation.md
/// driven by clients that are not ours (Python's requests, ffmpeg).
final class WebTokenEndToEndTests: XCTestCase {
    static let password = WebScripts.password

    func startDaemon(storage: String? = nil) throws -> (DaemonHarness, String) {
        let hash = try XCTUnwrap(PasswordHash.make(Self.password))
        let d = try DaemonHarness(storage: storage, config: """
            {"web": {"enabled": true, "listen": "127.0.0.1:0", "passwordHash": "\(hash)"}, "video": {"width": 1280, "height": 720}}
            """)
        try d.start()
        return (d, try webURL(d))
    }

    func webURL(_ d: DaemonHarness) throws -> String { try WebScripts.url(d) }

    /// `shutterctl web-token ARGS`: (exit status, stdout, stderr).
    func tokenCommand(_ d: DaemonHarness, _ args: String...) throws -> (Int32, String, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: DaemonHarness.binDir + "/shutterctl")
        p.arguments = ["--socket", d.socket, "web-token"] + args
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines),
                String(decoding: e, as: UTF8.self))
    }

    func add(_ d: DaemonHarness, _ name: String, _ scope: String) throws -> String {
        let (code, token, err) = try tokenCommand(d, "add", name, "--scope", scope)
        XCTAssertEqual(code, 0, err)
        XCTAssertEqual(token.count, 43, "32 random bytes, base64url: \(token)")
        XCTAssertTrue(err.contains("shown once"), err)
        return token
    }

    func list(_ d: DaemonHarness) throws -> [[String: Any]] {
        let (code, out, err) = try tokenCommand(d, "list")
        XCTAssertEqual(code, 0, err)
        let obj = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any]
        return try XCTUnwrap(obj?["tokens"] as? [[String: Any]], out)
    }

    func runScript(_ name: String, _ d: DaemonHarness, _ url: String, view: String, control: String) throws -> (Int32, String) {
        try WebScripts.run(name, d, url, extra: ["VIEW_TOKEN": view, "CONTROL_TOKEN": control, "OUT_DIR": d.dir])
    }

    /// GET `path` with a Bearer token by Python's urllib (not our code): the status.
    func statusCode(_ url: String, _ path: String, token: String) throws -> Int {
        let script = """
            import sys, urllib.request, urllib.error
            r = urllib.request.Request(sys.argv[1], headers={"Authorization": "Bearer " + sys.argv[2]})
            try:
                print(urllib.request.urlopen(r, timeout=30).status)
            except urllib.error.HTTPError as e:
                print(e.code)
            """
        let (_, out, err) = try runTool("python3", ["-c", script, url + path, token])
        return try XCTUnwrap(Int(out.trimmingCharacters(in: .whitespacesAndNewlines)), err)
    }

    /// The round trip (add, list, revoke), what each scope may do over HTTP, the snapshot,
    /// and that tokens (and their revocation) survive a restart.
    func testTokensSnapshotAndRestart() throws {
        var (d, url) = try startDaemon()
        defer { d.stop() }
        let view = try add(d, "home-assistant", "view")
        let control = try add(d, "automation", "control")
        var tokens = try list(d)
        XCTAssertEqual(tokens.map { $0["name"] as? String }, ["home-assistant", "automation"])
        XCTAssertEqual(tokens.map { $0["scope"] as? String }, ["view", "control"])
        XCTAssertTrue(tokens.allSatisfy { ($0["created"] as? String)?.hasSuffix("Z") == true && $0["lastUsed"] == nil }, "\(tokens)")
        let (dupCode, _, dupErr) = try tokenCommand(d, "add", "automation", "--scope", "view")
        XCTAssertEqual(dupCode, 1)
        XCTAssertTrue(dupErr.contains("exists"), dupErr)
        XCTAssertEqual(try tokenCommand(d, "add", "x", "--scope", "admin").0, 64)
        let file = try String(contentsOfFile: d.storage + "/" + WebTokens.fileName, encoding: .utf8)
        XCTAssertFalse(file.contains(view) || file.contains(control), "only digests on the card")

        let (code, text) = try runScript("test_web_tokens.py", d, url, view: view, control: control)
        XCTAssertEqual(code, 0, "\(text.split(separator: "\n").suffix(3).joined(separator: "\n"))\nshutterd log:\n\(d.log().suffix(3000))")
        XCTAssertTrue(text.contains("checks passed"))
        XCTAssertTrue(d.log().contains("wrong or revoked API token from 127.0.0.70"), "in the journal with the address")
        tokens = try list(d)
        XCTAssertEqual(tokens.map { $0["name"] as? String }, ["home-assistant", "automation"], "the script's temporary token is gone")
        XCTAssertTrue(tokens.allSatisfy { $0["lastUsed"] is String }, "both used: \(tokens)")

        // Revoke one, restart: the other works, the revoked one does not, "last used" was kept.
        XCTAssertEqual(try tokenCommand(d, "revoke", "automation").0, 0)
        let storage = d.storage
        d.stop()
        (d, url) = try startDaemon(storage: storage)
        XCTAssertEqual(try statusCode(url, "/api/snapshot.jpg", token: view), 200, "a token survives a restart")
        XCTAssertEqual(try statusCode(url, "/api/status", token: control), 401, "so does its revocation")
        tokens = try list(d)
        XCTAssertEqual(tokens.map { $0["name"] as? String }, ["home-assistant"])
        XCTAssertNotNil(tokens.first?["lastUsed"] as? String, "last use written at the stop: \(tokens)")
        XCTAssertEqual(try tokenCommand(d, "revoke", "automation").0, 1, "nothing to revoke twice")
    }

    /// docs/home-automation.md's Home Assistant section, as Home Assistant would use it.
    func testHomeAssistantConfiguration() throws {
        let (d, url) = try startDaemon()
        defer { d.stop() }
        let view = try add(d, "home-assistant", "view")
        let control = try add(d, "home-assistant-photo", "control")
        let (code, text) = try runScript("home_assistant.py", d, url, view: view, control: control)
        if code == 77 { throw XCTSkip(text) }
        XCTAssertEqual(code, 0, "\(text.split(separator: "\n").suffix(3).joined(separator: "\n"))\nshutterd log:\n\(d.log().suffix(3000))")
        XCTAssertTrue(text.contains("checks passed"))
        XCTAssertEqual(d.files("JPG").count, 1, "the rest_command's photo")
    }
}
