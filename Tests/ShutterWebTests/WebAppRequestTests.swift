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

    func app(_ reply: @escaping @Sendable (JSONObject) async -> JSONObject = { _ in ["ok": .bool(true)] }) -> WebApp {
        let storage = Storage(root: root, budget: CaptureBudget(photoBytes: 1, videoBytes: 1))
        return WebApp(backend: WebBackend(request: reply, storage: storage), passwordHash: "")
    }

    func request(_ method: String, _ path: String, headers: [String: String] = [:], body: String = "") -> WebRequest {
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
