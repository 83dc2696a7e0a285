// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import ShutterStorage
@testable import ShutterWeb
import XCTest

/// The page is real files (Sources/ShutterWeb/Page), embedded at build time (issue 20
/// item 6), served with their SHA-256 as ETag: a matching If-None-Match gets 304.
final class WebPageFilesTests: XCTestCase {
    static let pageDir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/ShutterWeb/Page")
    /// Each file and the path it is served at.
    static let paths = ["login.html": "/login", "index.html": "/", "app.css": "/static/app.css",
                        "app.js": "/static/app.js", "login.js": "/static/login.js"]

    func app() -> WebApp {
        let storage = Storage(root: "/nonexistent", budget: CaptureBudget(photoBytes: 1, videoBytes: 1))
        return WebApp(backend: WebBackend(request: { _, answer in answer(["ok": .bool(true)]) }, storage: storage),
                      passwordHash: "")
    }

    func get(_ app: WebApp, _ path: String, method: String = "GET", _ headers: [String: String] = [:]) -> WebResponse {
        app.handle(WebAppRequestTests.request(method, path, headers: headers))
    }

    func body(_ r: WebResponse) -> Data {
        guard case .bytes(let d) = r.body else { XCTFail("not bytes"); return Data() }
        return d
    }

    func header(_ r: WebResponse, _ name: String) -> String? { r.headers.first { $0.0 == name }?.1 }

    func testTheEmbeddedBytesAreTheFilesInTheRepository() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.pageDir.path).filter { !$0.hasPrefix(".") }.sorted()
        XCTAssertEqual(names, WebPage.embedded.keys.sorted())
        XCTAssertEqual(Set(names), Set(Self.paths.keys), "every page file has a path it is served at")
        for name in names {
            let onDisk = try Data(contentsOf: Self.pageDir.appendingPathComponent(name))
            XCTAssertEqual(WebPage.embedded[name]?.bytes, onDisk, name)
        }
    }

    /// The ETag is the file's SHA-256 as coreutils computes it (not our own code).
    func testTheETagIsTheFilesSHA256() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        p.currentDirectoryURL = Self.pageDir
        p.arguments = Array(Self.paths.keys)
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        var seen = 0
        for line in text.split(separator: "\n") {
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            XCTAssertEqual(WebPage.embedded[String(f[1])]?.etag, "\"\(f[0])\"", String(f[1]))
            seen += 1
        }
        XCTAssertEqual(seen, Self.paths.count)
    }

    func testEachFileHasAnETagAndA304() throws {
        let app = app()
        let (id, _) = app.sessions.create()
        let cookie = ["Cookie": "\(WebSessions.cookieName)=\(id)"]
        for (name, path) in Self.paths {
            let file = try XCTUnwrap(WebPage.embedded[name])
            let full = get(app, path, cookie)
            XCTAssertEqual(full.status, 200, path)
            XCTAssertEqual(body(full), file.bytes, path)
            XCTAssertEqual(header(full, "ETag"), file.etag, path)
            XCTAssertEqual(header(full, "Cache-Control"), "no-cache", path)
            XCTAssertEqual(full.contentType.hasPrefix("text/html"), name.hasSuffix(".html"), path)
            if name.hasSuffix(".html") {
                XCTAssertNotNil(header(full, "Content-Security-Policy"), path)
            }
            for ifNoneMatch in [file.etag, "W/" + file.etag, "\"other\", " + file.etag, "*"] {
                let again = get(app, path, cookie.merging(["If-None-Match": ifNoneMatch]) { a, _ in a })
                XCTAssertEqual(again.status, 304, "\(path) If-None-Match: \(ifNoneMatch)")
                XCTAssertEqual(body(again), Data(), path)
                XCTAssertEqual(header(again, "ETag"), file.etag, path)
                XCTAssertEqual(header(again, "Cache-Control"), "no-cache", path)
            }
            let changed = get(app, path, cookie.merging(["If-None-Match": "\"an older version\""]) { a, _ in a })
            XCTAssertEqual(changed.status, 200, path)
            XCTAssertEqual(get(app, path, method: "HEAD", cookie).status, 200, "HEAD \(path)")
        }
    }

    /// The login page and what it loads need no session; the page and its script do,
    /// and a 304 is no way around that.
    func testOnlyTheLoginPageIsPublic() throws {
        let app = app()
        for (name, path) in Self.paths {
            let r = get(app, path, ["If-None-Match": WebPage.embedded[name]!.etag])
            if WebPage.publicFiles.contains(name) {
                XCTAssertEqual(r.status, 304, path)
            } else {
                XCTAssertTrue([303, 401].contains(r.status), "\(path) without a session: \(r.status)")
                XCTAssertNotEqual(body(r), WebPage.embedded[name]!.bytes)
            }
        }
        let (id, _) = app.sessions.create()
        let cookie = ["Cookie": "\(WebSessions.cookieName)=\(id)"]
        XCTAssertEqual(get(app, "/static/login.html", cookie).status, 404, "an HTML page only at its own path")
        XCTAssertEqual(get(app, "/static/../Package.swift", cookie).status, 404)
        XCTAssertEqual(get(app, "/static/app.js", method: "POST", cookie).status, 403, "POST needs the CSRF token first")
    }

    /// The Content-Security-Policy allows no inline script or style: the HTML has none.
    func testTheHTMLHasNoInlineScriptOrStyle() throws {
        for name in WebPage.embedded.keys where name.hasSuffix(".html") {
            let html = String(decoding: WebPage.embedded[name]!.bytes, as: UTF8.self)
            XCTAssertNil(html.range(of: #"<script(?![^>]*\bsrc=)[^>]*>"#, options: .regularExpression), "\(name): inline script")
            XCTAssertNil(html.range(of: "<style", options: .caseInsensitive), "\(name): inline style")
            XCTAssertNil(html.range(of: #"\sstyle="#, options: .regularExpression), "\(name): style attribute")
            XCTAssertNil(html.range(of: #"\son[a-z]+="#, options: .regularExpression), "\(name): event handler attribute")
        }
        // Nothing from beyond the Pi (no CDN): no absolute URL in any of the files.
        for (name, file) in WebPage.embedded {
            let text = String(decoding: file.bytes, as: UTF8.self)
            XCTAssertNil(text.range(of: "(https?:)?//[a-z0-9.-]+[.:/]", options: [.regularExpression, .caseInsensitive]),
                         "\(name): an absolute URL")
        }
    }
}
