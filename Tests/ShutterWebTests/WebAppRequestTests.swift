// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import ShutterStorage
@testable import ShutterWeb
import Synchronization
import XCTest

/// WebApp in process, on a stand-in for the service: the checks a request meets
/// before it reaches the service, and the shape of what comes back (issue 23).
final class WebAppRequestTests: XCTestCase {
    var root = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/shutter-webapp-XXXXXX".utf8CString)
        root = String(cString: try XCTUnwrap(mkdtemp(&template)))
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: root) }

    /// `reply`: the stand-in service's answer; nil never answers (a wedged service).
    func app(askDeadline: Double = WebApp.askDeadlineSeconds,
             _ reply: @escaping @Sendable (JSONObject) -> JSONObject? = { _ in ["ok": .bool(true)] }) -> WebApp {
        let storage = Storage(root: root, budget: CaptureBudget(photoBytes: 1, videoBytes: 1))
        let backend = WebBackend(request: { request, answer in if let r = reply(request) { answer(r) } }, storage: storage)
        return WebApp(backend: backend, passwordHash: "", askDeadline: askDeadline)
    }

    func request(_ method: String, _ path: String, headers: [String: String] = [:], body: String = "") -> WebRequest {
        Self.request(method, path, headers: headers, body: body)
    }

    static func request(_ method: String, _ path: String, headers: [String: String] = [:], body: String = "") -> WebRequest {
        WebRequest(method: method, path: path, client: "127.0.0.1", body: Data(body.utf8), tls: false,
                   header: { name in headers.first { $0.key.lowercased() == name.lowercased() }?.value },
                   query: { _ in nil })
    }

    /// A session whose CSRF token has a "K" in it (about half of them do).
    func sessionWithK(_ app: WebApp) throws -> (cookie: String, csrf: String) {
        for _ in 0..<500 {
            let (id, csrf) = app.sessions.create()
            if csrf.contains("K") { return ("\(WebSessions.cookieName)=\(id)", csrf) }
        }
        throw XCTSkip("no token with a K in 500 tries")
    }

    /// Swift's `==` is canonical equivalence: U+212A KELVIN SIGN equals "K". The token is bytes.
    func testTheCSRFTokenIsComparedByteForByte() throws {
        let app = app()
        let (cookie, csrf) = try sessionWithK(app)
        let kelvin = csrf.replacingOccurrences(of: "K", with: "\u{212A}")
        XCTAssertTrue(kelvin == csrf, "the premise: Swift's == takes the Kelvin sign for K")
        XCTAssertEqual(app.handle(request("POST", "/api/photo", headers: ["Cookie": cookie, "X-CSRF-Token": kelvin])).status, 403)
        XCTAssertEqual(app.handle(request("POST", "/api/photo", headers: ["Cookie": cookie, "X-CSRF-Token": csrf + "A"])).status, 403)
        XCTAssertEqual(app.handle(request("POST", "/api/photo", headers: ["Cookie": cookie, "X-CSRF-Token": String(csrf.dropLast())])).status, 403)
        XCTAssertEqual(app.handle(request("POST", "/api/photo", headers: ["Cookie": cookie, "X-CSRF-Token": csrf])).status, 200)
    }

    func testTheSessionCookieIsComparedByteForByte() throws {
        let app = app()
        guard let id = (0..<500).lazy.map({ _ in app.sessions.create().id }).first(where: { $0.contains("K") }) else {
            throw XCTSkip("no session id with a K in 500 tries")
        }
        let kelvin = id.replacingOccurrences(of: "K", with: "\u{212A}")
        XCTAssertEqual(app.handle(request("GET", "/api/session", headers: ["Cookie": "shutter_session=\(kelvin)"])).status, 401)
        XCTAssertEqual(app.handle(request("GET", "/api/session", headers: ["Cookie": "shutter_session=\(id)"])).status, 200)
    }

    /// A wedged service does not hold the connection's thread: past the deadline, 503.
    /// (Before: `ask` waited forever.) The service here never answers, so the verdict
    /// does not depend on timing; the 30 s wait only bounds a failure.
    func testARequestTheServiceNeverAnswersGets503() throws {
        let app = app(askDeadline: 0.2) { _ in nil }
        let (id, csrf) = app.sessions.create()
        for (method, path) in [("GET", "/api/status"), ("POST", "/api/photo"), ("GET", "/api/settings")] {
            let answered = expectation(description: "\(method) \(path) answered")
            let response = Mutex<(Int, String?)>((0, nil))
            Thread.detachNewThread {
                let reply = app.handle(Self.request(method, path, headers: ["Cookie": "shutter_session=\(id)", "X-CSRF-Token": csrf]))
                response.withLock { $0 = (reply.status, reply.headers.first { $0.0 == "Retry-After" }?.1) }
                answered.fulfill()
            }
            wait(for: [answered], timeout: 30)
            XCTAssertEqual(response.withLock { $0.0 }, 503, "\(method) \(path)")
            XCTAssertEqual(response.withLock { $0.1 }, "5")
        }
    }

    /// Replies name files by DCF number, name and URL; the card's paths stay on the device.
    func testRepliesCarryNoPathOnTheCard() throws {
        let root = self.root, path = root + "/DCIM/100SHUTR/SHTR0007.JPG"
        let app = app { request in
            if request["cmd"] == .string("status") {
                return ["ok": .bool(true), "status": .object(["state": .string("idle"), "storageRoot": .string(root),
                                                              "lastFiles": .array([.string(path)])])]
            }
            return ["ok": .bool(true), "files": .array([.string(path)]), "note": .string("saved \(path)")]
        }
        let (id, csrf) = app.sessions.create()
        let headers = ["Cookie": "shutter_session=\(id)", "X-CSRF-Token": csrf]
        let photo = app.handle(request("POST", "/api/photo", headers: headers))
        let record = app.handle(request("POST", "/api/record", headers: headers, body: #"{"action":"stop"}"#))
        let status = app.handle(request("GET", "/api/status", headers: headers))
        for response in [photo, record, status] {
            guard case .bytes(let body) = response.body else { return XCTFail("not bytes") }
            let text = String(decoding: body, as: UTF8.self)
            XCTAssertEqual(response.status, 200, text)
            XCTAssertFalse(text.contains(root), "a path on the card: \(text)")
            XCTAssertFalse(text.contains("\"files\""), text)
        }
        guard case .bytes(let body) = photo.body, case .object(let o) = try JSONParser.parse(String(decoding: body, as: UTF8.self)).value
        else { return XCTFail("not JSON") }
        XCTAssertEqual(o["items"], .array([.object(["number": .int(1000007), "name": .string("SHTR0007.JPG"),
                                                    "url": .string("/files/1000007")])]))
        XCTAssertEqual(o["note"], .string("saved DCIM/100SHUTR/SHTR0007.JPG"))
    }

    /// The preview's close handler is kept under the stream's lock, and one set after
    /// the stream closed still runs (before: it never did, and the app kept the stream).
    func testAStreamClosedBeforeItsHandlerIsSetStillRunsIt() throws {
        let feed = PreviewFeed()
        let stream = try XCTUnwrap(feed.open())
        XCTAssertTrue(feed.watched)
        stream.close()
        XCTAssertFalse(feed.watched)
        let called = Mutex(0)
        stream.life.whenClosed { called.withLock { $0 += 1 } }
        XCTAssertEqual(called.withLock { $0 }, 1)
        let open = try XCTUnwrap(feed.open())
        open.life.whenClosed { called.withLock { $0 += 1 } }
        XCTAssertEqual(called.withLock { $0 }, 1, "not before it closes")
        open.close()
        open.close()
        XCTAssertEqual(called.withLock { $0 }, 2, "once when it closes")
    }
}

final class PasswordNULTests: XCTestCase {
    /// libsodium is given the password's bytes, all of them: a NUL does not end it.
    func testAPasswordIsNotCutAtANUL() throws {
        let hash = try XCTUnwrap(PasswordHash.make("correct-horse-battery"))
        XCTAssertTrue(PasswordHash.verify("correct-horse-battery", against: hash))
        XCTAssertFalse(PasswordHash.verify("correct-horse-battery\u{0}anything", against: hash))
        XCTAssertFalse(PasswordHash.verify("correct-horse-battery\u{0}", against: hash))
    }

    func testANewPasswordWithANULIsRefused() {
        XCTAssertNil(PasswordHash.make("correct\u{0}horse"))
        XCTAssertEqual(PasswordHash.refusal(forNew: "correct\u{0}horse"), "a web password cannot contain a NUL character")
        XCTAssertNil(PasswordHash.refusal(forNew: "correct horse"))
    }
}
