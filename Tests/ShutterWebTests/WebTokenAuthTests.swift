// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import ShutterStorage
@testable import ShutterWeb
import Synchronization
import XCTest

/// API tokens on WebApp's requests, on a stand-in for the service: what each scope
/// may do, that no CSRF token is asked of them, the back-off of wrong ones, and
/// where a Basic challenge is (and is not) sent.
final class WebTokenAuthTests: XCTestCase {
    var root = ""
    let throttleClock = TestClock(1000)
    /// The commands that reached the stand-in service.
    let asked = Answered()

    override func setUpWithError() throws {
        var template = Array("/tmp/shutter-tokenauth-XXXXXX".utf8CString)
        root = String(cString: try XCTUnwrap(mkdtemp(&template)))
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: root) }

    func app() -> (WebApp, WebTokens) {
        let storage = Storage(root: root, budget: CaptureBudget(photoBytes: 1, videoBytes: 1))
        let backend = WebBackend(request: { [asked] request, answer in
            if case .string(let cmd)? = request["cmd"] { asked.commands.withLock { $0.append(cmd) } }
            answer(["ok": .bool(true)])
        }, storage: storage, preview: PreviewFeed())
        let tokens = WebTokens(root: root)
        let app = WebApp(backend: backend, passwordHash: "", throttle: LoginThrottle(now: { [throttleClock] in throttleClock.now }),
                         tokens: tokens)
        return (app, tokens)
    }

    func get(_ app: WebApp, _ path: String, _ headers: [String: String] = [:], method: String = "GET") -> WebResponse {
        app.handle(WebAppRequestTests.request(method, path, headers: headers))
    }

    static func bearer(_ token: String) -> [String: String] { ["Authorization": "Bearer \(token)"] }
    static func basic(_ token: String, user: String = "homeassistant") -> [String: String] {
        ["Authorization": "Basic " + Data("\(user):\(token)".utf8).base64EncodedString()]
    }

    func header(_ r: WebResponse, _ name: String) -> String? { r.headers.first { $0.0 == name }?.1 }

    func testAViewTokenReadsAndIsRefusedWhatChangesSomething() throws {
        let (app, tokens) = app()
        let (view, _) = try tokens.add(name: "ha", scope: "view")
        XCTAssertEqual(get(app, "/api/status", Self.bearer(view)).status, 200)
        XCTAssertEqual(get(app, "/api/status", Self.basic(view)).status, 200)
        XCTAssertEqual(get(app, "/api/files", Self.basic(view, user: "")).status, 200)
        XCTAssertEqual(asked.commands.withLock { $0 }, ["status", "status"])
        for (method, path) in [("POST", "/api/photo"), ("POST", "/api/record"), ("POST", "/api/settings"),
                               ("POST", "/api/focus"), ("DELETE", "/api/files/1000001"), ("POST", "/api/logout")] {
            let r = get(app, path, Self.bearer(view), method: method)
            XCTAssertEqual(r.status, 403, "\(method) \(path)")
            XCTAssertNil(header(r, "WWW-Authenticate"), "a 403 is no reason to ask again")
        }
        XCTAssertEqual(asked.commands.withLock { $0 }, ["status", "status"], "nothing refused reached the service")
    }

    /// A control token takes a photo with no session and no CSRF token.
    func testAControlTokenTakesAPhotoWithoutCSRF() throws {
        let (app, tokens) = app()
        let (control, _) = try tokens.add(name: "script", scope: "control")
        XCTAssertEqual(get(app, "/api/photo", Self.bearer(control), method: "POST").status, 200)
        XCTAssertEqual(get(app, "/api/photo", Self.basic(control), method: "POST").status, 200)
        XCTAssertEqual(asked.commands.withLock { $0 }, ["photo", "photo"])
        XCTAssertEqual(get(app, "/api/session", Self.bearer(control)).status, 400, "a token has no session to ask a CSRF token of")
        // Without a token the same request still needs the session and its CSRF token.
        XCTAssertEqual(get(app, "/api/photo", method: "POST").status, 401)
    }

    func testARevokedTokenIsRefusedOnItsNextRequest() throws {
        let (app, tokens) = app()
        let (view, _) = try tokens.add(name: "ha", scope: "view")
        XCTAssertEqual(get(app, "/api/status", Self.bearer(view)).status, 200)
        try tokens.revoke(name: "ha")
        let r = get(app, "/api/status", Self.bearer(view))
        XCTAssertEqual(r.status, 401)
        XCTAssertNotNil(header(r, "WWW-Authenticate"))
    }

    /// Wrong tokens slow the address down as wrong passwords do: 1, 2, 4 s; a try
    /// before then is 429 unchecked (even with a right token); other addresses are not slowed.
    func testWrongTokensBackOffLikePasswords() throws {
        let (app, tokens) = app()
        let (view, _) = try tokens.add(name: "ha", scope: "view")
        let wrong = String(repeating: "A", count: 43)
        let first = get(app, "/api/status", Self.bearer(wrong))
        XCTAssertEqual(first.status, 401)
        XCTAssertEqual(header(first, "Retry-After"), "1")
        XCTAssertEqual(header(first, "WWW-Authenticate"), "Basic realm=\"Shutter\", charset=\"UTF-8\"")
        let early = get(app, "/api/status", Self.bearer(view))
        XCTAssertEqual(early.status, 429)
        XCTAssertEqual(header(early, "Retry-After"), "1")
        var other = WebAppRequestTests.request("GET", "/api/status", headers: Self.bearer(view))
        other.client = "192.168.1.20"
        XCTAssertEqual(app.handle(other).status, 200, "another address is not slowed")
        throttleClock.advance(1)
        XCTAssertEqual(header(get(app, "/api/status", Self.basic("nope")), "Retry-After"), "2")
        throttleClock.advance(2)
        XCTAssertEqual(header(get(app, "/api/status", Self.bearer(wrong)), "Retry-After"), "4")
        throttleClock.advance(4)
        XCTAssertEqual(get(app, "/api/status", Self.bearer(view)).status, 200)
        // The same table as passwords: the address's login waits too.
        _ = get(app, "/api/status", Self.bearer(wrong))
        XCTAssertEqual(app.handle(WebAppRequestTests.request("POST", "/api/login", body: "{\"password\":\"x\"}")).status, 429)
    }

    /// The challenge that makes ffmpeg (or Home Assistant with Digest in mind) send its
    /// password goes only where the page's own fetches cannot get it: the page always
    /// sends its cookie, and a browser shown a challenge opens a password dialog.
    func testBasicChallengeOnlyWhereThePageCannotGetIt() throws {
        let (app, _) = app()
        for path in ["/api/snapshot.jpg", "/preview.mjpg"] {
            XCTAssertEqual(header(get(app, path), "WWW-Authenticate"), "Basic realm=\"Shutter\", charset=\"UTF-8\"", path)
            let withCookie = get(app, path, ["Cookie": "shutter_session=expired"])
            XCTAssertEqual(withCookie.status, 401)
            XCTAssertNil(header(withCookie, "WWW-Authenticate"), path)
        }
        for path in ["/api/status", "/api/files", "/files/1000001", "/api/settings"] {
            let r = get(app, path)
            XCTAssertEqual(r.status, 401, path)
            XCTAssertNil(header(r, "WWW-Authenticate"), path)
        }
        XCTAssertEqual(get(app, "/").status, 303, "the page itself still goes to the login")
    }

    func testUnsupportedSchemesAreRefusedWithoutCountingAsAGuess() throws {
        let (app, tokens) = app()
        let (view, _) = try tokens.add(name: "ha", scope: "view")
        for auth in ["Digest username=\"x\"", "Bearer", "Basic !!!", "Token abc"] {
            let r = get(app, "/api/status", ["Authorization": auth])
            XCTAssertEqual(r.status, 401, auth)
            XCTAssertTrue(String(decoding: bodyData(r), as: UTF8.self).contains("Bearer TOKEN"), auth)
        }
        XCTAssertEqual(get(app, "/api/status", Self.bearer(view)).status, 200, "no back-off: no secret was checked")
        let long = String(repeating: "x", count: 10_000)
        XCTAssertEqual(get(app, "/api/status", Self.bearer(long)).status, 401)
    }

    func bodyData(_ r: WebResponse) -> Data {
        if case .bytes(let d) = r.body { return d }
        return Data()
    }
}

/// The commands that reached the stand-in service.
final class Answered: Sendable {
    let commands = Mutex([String]())
}
