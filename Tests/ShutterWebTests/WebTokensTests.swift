// SPDX-License-Identifier: BSD-2-Clause
import Foundation
@testable import ShutterWeb
import Synchronization
import XCTest

/// The API token store on its own: what is kept (a digest, never the token), where,
/// how it survives a restart, and when "last used" is written.
final class WebTokensTests: XCTestCase {
    var root = ""
    let wall = TestClock(1_800_000_000)
    let up = TestClock(100)

    override func setUpWithError() throws {
        var template = Array("/tmp/shutter-tokens-XXXXXX".utf8CString)
        root = String(cString: try XCTUnwrap(mkdtemp(&template)))
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: root) }

    func store() -> WebTokens {
        WebTokens(root: root, wallClock: { [wall] in wall.now }, uptime: { [up] in up.now })
    }

    func fileText() -> String { (try? String(contentsOfFile: root + "/" + WebTokens.fileName, encoding: .utf8)) ?? "" }

    func testAddListRevokeRoundTrip() throws {
        let tokens = store()
        let (view, info) = try tokens.add(name: "home-assistant", scope: "view")
        let (control, _) = try tokens.add(name: "script", scope: "control")
        XCTAssertEqual(info, WebTokens.Info(name: "home-assistant", scope: .view, created: 1_800_000_000, lastUsed: nil))
        // 32 random bytes, URL-safe base64 without padding.
        XCTAssertEqual(view.count, 43)
        XCTAssertNotEqual(view, control)
        XCTAssertEqual(tokens.list().map(\.name), ["home-assistant", "script"])
        XCTAssertEqual(tokens.scope(of: view), .view)
        XCTAssertEqual(tokens.scope(of: control), .control)
        XCTAssertNil(tokens.scope(of: view + "x"))
        XCTAssertNil(tokens.scope(of: ""))

        try tokens.revoke(name: "home-assistant")
        XCTAssertNil(tokens.scope(of: view), "revoked: refused at once")
        XCTAssertEqual(tokens.scope(of: control), .control)
        XCTAssertEqual(tokens.list().map(\.name), ["script"])
        XCTAssertThrowsError(try tokens.revoke(name: "home-assistant"))
    }

    /// The file holds digests only, is the service user's alone, and a new store (a
    /// restarted service) reads the same tokens from it; a revocation is in it too.
    func testTokensSurviveARestartAndOnlyTheirDigestIsStored() throws {
        let (view, _) = try store().add(name: "ha", scope: "view")
        let (control, _) = try store().add(name: "ctl", scope: "control")
        let text = fileText()
        XCTAssertFalse(text.contains(view) || text.contains(control), text)
        XCTAssertTrue(text.contains(WebTokens.hex(WebTokens.digest(Array(view.utf8)))), text)
        var st = stat()
        XCTAssertEqual(stat(root + "/" + WebTokens.fileName, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)

        let again = store()
        XCTAssertEqual(again.scope(of: view), .view)
        XCTAssertEqual(again.scope(of: control), .control)
        try again.revoke(name: "ha")
        XCTAssertNil(store().scope(of: view))
        XCTAssertEqual(store().scope(of: control), .control)
    }

    func testBadNamesScopesAndDuplicatesAreRefusedInWords() throws {
        let tokens = store()
        for name in ["", "has space", "-flag", String(repeating: "a", count: 65), "ä", "a/b", "a\u{0}b"] {
            XCTAssertThrowsError(try tokens.add(name: name, scope: "view"), name) { e in
                XCTAssertTrue("\(e)".contains("letters, digits"), "\(e)")
            }
        }
        XCTAssertThrowsError(try tokens.add(name: "x", scope: "admin")) { XCTAssertTrue("\($0)".contains("view")) }
        _ = try tokens.add(name: "x", scope: "view")
        XCTAssertThrowsError(try tokens.add(name: "x", scope: "control")) { XCTAssertTrue("\($0)".contains("exists")) }
        XCTAssertThrowsError(try tokens.revoke(name: "nobody")) { XCTAssertTrue("\($0)".contains("there are: x")) }
        for i in 1..<WebTokens.maxTokens { _ = try tokens.add(name: "t\(i)", scope: "view") }
        XCTAssertThrowsError(try tokens.add(name: "one-more", scope: "view")) { XCTAssertTrue("\($0)".contains("revoke one")) }
    }

    /// "last used" is noted in memory at once, but a request does not rewrite the file:
    /// that happens at most once a minute, and at the service's stop (flush).
    func testLastUseIsKeptInMemoryAndWrittenLater() throws {
        let tokens = store()
        let (view, _) = try tokens.add(name: "ha", scope: "view")
        let written = fileText()
        wall.advance(5)
        XCTAssertEqual(tokens.scope(of: view), .view)
        XCTAssertEqual(tokens.list().first?.lastUsed, 1_800_000_005)
        // The uptime clock stands still: the write is due only a minute after the last one.
        XCTAssertEqual(fileText(), written, "a request does not rewrite the file")
        XCTAssertFalse(written.contains("lastUsed"))
        tokens.flush()
        XCTAssertTrue(fileText().contains("lastUsed"), fileText())
        XCTAssertEqual(store().list().first?.lastUsed, 1_800_000_005, "read back after a restart")
    }

    /// A file that is not ours is moved aside and no token is accepted from it.
    func testAnUnreadableFileIsSetAsideAndNothingIsAccepted() throws {
        let path = root + "/" + WebTokens.fileName
        try Data("{\"tokens\": [{\"name\": \"x\", \"scope\": \"root\", \"sha256\": \"00\", \"created\": 0}]}".utf8)
            .write(to: URL(fileURLWithPath: path))
        let tokens = store()
        XCTAssertEqual(tokens.list(), [])
        XCTAssertTrue(FileManager.default.fileExists(atPath: path + ".corrupt"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        try Data("not json".utf8).write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(store().list(), [])
    }

    func testHeaderForms() {
        let basic = Data("homeassistant:s3cr:et".utf8).base64EncodedString()
        XCTAssertEqual(WebApp.presentedToken("Basic \(basic)"), "s3cr:et", "the password is everything after the first colon")
        XCTAssertEqual(WebApp.presentedToken("basic  \(Data(":tok".utf8).base64EncodedString())"), "tok", "any user name, even none")
        XCTAssertEqual(WebApp.presentedToken("Bearer abc"), "abc")
        XCTAssertEqual(WebApp.presentedToken("BEARER abc "), "abc")
        XCTAssertNil(WebApp.presentedToken("Bearer"))
        XCTAssertNil(WebApp.presentedToken("Basic !!!"))
        XCTAssertNil(WebApp.presentedToken("Basic \(Data("no-colon".utf8).base64EncodedString())"))
        XCTAssertNil(WebApp.presentedToken("Digest username=\"x\""))
        XCTAssertNil(WebApp.presentedToken(""))
    }
}

/// A clock a test moves by hand.
final class TestClock: Sendable {
    private let value: Mutex<Double>
    init(_ start: Double) { value = Mutex(start) }
    var now: Double { value.withLock { $0 } }
    func advance(_ seconds: Double) { value.withLock { $0 += seconds } }
}
