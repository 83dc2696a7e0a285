// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

/// The page: `Sources/ShutterWeb/Page` (index.html, login.html, app.css, app.js,
/// login.js), real files that web tools can work on, embedded into shutterd at
/// build time by the EmbedPage plugin (`WebPage.embedded`), so the binary needs
/// nothing installed beside it and the page loads nothing from beyond the Pi.
/// Each file is served with its SHA-256 as a strong ETag and `Cache-Control:
/// no-cache`: the browser keeps it and asks again each time, and an unchanged file
/// costs a 304 with no body.
enum WebPage {
    struct File: Sendable {
        let name: String
        let bytes: Data
        /// The quoted SHA-256 of the bytes.
        let etag: String

        init(name: String, base64: String, sha256: String) {
            self.name = name
            // The generator wrote it from the file's bytes: it decodes, or the build is broken.
            bytes = Data(base64Encoded: base64)!
            etag = "\"\(sha256)\""
        }

        var contentType: String {
            switch PlainIO.pathExtension(name) {
            case "html": return "text/html; charset=utf-8"
            case "css": return "text/css; charset=utf-8"
            case "js": return "text/javascript; charset=utf-8"
            case "svg": return "image/svg+xml"
            case "png": return "image/png"
            case "ico": return "image/x-icon"
            case "json", "webmanifest": return "application/json"
            default: return "application/octet-stream"
            }
        }
    }

    /// Served without a session: the login page and what it loads.
    static let publicFiles: Set<String> = ["login.html", "login.js", "app.css"]

    /// The file a `/static/NAME` path names (never an HTML page: those have their own paths).
    static func staticFile(_ path: String) -> File? {
        guard path.hasPrefix("/static/") else { return nil }
        let name = String(path.dropFirst("/static/".count))
        guard !name.hasSuffix(".html"), let file = embedded[name] else { return nil }
        return file
    }

    static func response(_ name: String, _ request: WebRequest) -> WebResponse {
        guard let file = embedded[name] else { return .error(404, "not found") }
        return response(file, request)
    }

    static func response(_ file: File, _ request: WebRequest) -> WebResponse {
        let headers = [("ETag", file.etag), ("Cache-Control", "no-cache")]
        if let tags = request.header("If-None-Match"), matches(tags, file.etag) {
            return WebResponse(status: 304, contentType: file.contentType, body: .bytes(Data()), headers: headers)
        }
        return WebResponse(status: 200, contentType: file.contentType, body: .bytes(file.bytes), headers: headers)
    }

    /// `If-None-Match`: `*` or a list of entity tags, compared weakly (RFC 9110 13.1.2:
    /// a `W/` prefix does not matter here).
    static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { tag in
            let t = tag.trimmedSpaces
            return t == "*" || (t.hasPrefix("W/") ? String(t.dropFirst(2)) : t) == etag
        }
    }
}
