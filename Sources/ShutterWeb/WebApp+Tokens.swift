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

/// API tokens on requests (WebTokens): `Authorization: Bearer TOKEN`, or HTTP Basic
/// with the token as the password and any user name (Home Assistant's MJPEG camera
/// sends only that). A token request needs no session and no CSRF token: no browser
/// sends an Authorization header on its own to another site's page.
extension WebApp {
    static let basicChallenge = ("WWW-Authenticate", "Basic realm=\"Shutter\", charset=\"UTF-8\"")

    /// nil when the request's token may do what it asks; else its refusal. Wrong and
    /// revoked tokens slow the address down as wrong passwords do (the same LoginThrottle).
    func tokenRefusal(_ r: WebRequest) -> WebResponse? {
        // The challenge goes on every 401 here: the request carried Authorization, so it
        // comes from a client that speaks it (or a browser already in Basic), never from
        // the page's own fetches, which send a cookie and no Authorization.
        guard let presented = Self.presentedToken(r.header("Authorization") ?? "") else {
            return WebResponse.error(401, "unsupported Authorization: send \"Bearer TOKEN\", or HTTP Basic with the token as the "
                                     + "password (any user name); tokens come from `shutterctl web-token add`")
                .with(header: Self.basicChallenge)
        }
        let wait = throttle.wait(for: r.client)
        if wait > 0 {
            let s = Int(wait.rounded(.up))
            return WebResponse.error(429, "too many wrong passwords or tokens from \(r.client): try again in \(s) s",
                                     ["retryAfterSeconds": .int(s)]).with(header: ("Retry-After", String(s)))
        }
        guard let scope = tokens?.scope(of: presented) else {
            let delay = Int(throttle.failed(r.client))
            Log("shutter.web").warning("wrong or revoked API token from \(r.client); next try allowed in \(delay) s")
            return WebResponse.error(401, "wrong or revoked API token; try again in \(delay) s", ["retryAfterSeconds": .int(delay)])
                .with(header: ("Retry-After", String(delay))).with(header: Self.basicChallenge)
        }
        // A right token does not clear the address (a right password does): else a view
        // token would reset the password back-off between guesses.
        if scope == .view && r.method != "GET" && r.method != "HEAD" {
            return .error(403, "this API token's scope is view: it reads (GET), it may not \(r.method) \(r.path); "
                          + "use a control token (shutterctl web-token add NAME --scope control)")
        }
        return nil
    }

    /// The token in `Bearer TOKEN` or in `Basic base64(user:TOKEN)`; nil for any other form.
    static func presentedToken(_ header: String) -> String? {
        let trimmed = header.trimmedSpaces
        guard let space = trimmed.firstIndex(of: " ") else { return nil }
        let scheme = trimmed[..<space].lowercased()
        let value = trimmed[space...].trimmedSpaces
        guard !value.isEmpty else { return nil }
        switch scheme {
        case "bearer":
            return value
        case "basic":
            guard let data = Data(base64Encoded: value), let text = String(data: data, encoding: .utf8),
                  let colon = text.firstIndex(of: ":") else { return nil }
            return String(text[text.index(after: colon)...])
        default:
            return nil
        }
    }

    /// The still-image and MJPEG URLs are what Home Assistant and ffmpeg are given: a
    /// client that waits for a challenge before it sends its password gets one there,
    /// when no session cookie came. Never elsewhere: a Basic challenge on the 401 of the
    /// page's own fetch (its session ended) would make the browser open a password dialog.
    static func challenges(_ r: WebRequest) -> Bool {
        (r.path == "/api/snapshot.jpg" || r.path == "/preview.mjpg" || r.path == "/api/live.mp4") && WebSessions.cookieValue(r.header("Cookie")) == nil
    }
}
