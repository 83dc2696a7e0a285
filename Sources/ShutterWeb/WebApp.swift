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
import ShutterStorage
import Synchronization

/// What the web app needs from the service: the control socket's own request
/// path (one JSON request in, its one JSON reply out: the same rule, the same
/// answers as shutterctl) and the card's files.
public struct WebBackend: Sendable {
    /// Hands a request to the service; the service calls `answer` once, from any thread.
    public var request: @Sendable (JSONObject, _ answer: @escaping @Sendable (JSONObject) -> Void) -> Void
    public var storage: Storage
    /// The live preview's frames; nil = no preview.
    public var preview: PreviewFeed?
    /// The service's live events (`/api/events`); nil = none.
    public var events: LiveEvents?
    /// The live H.264 (`/api/live.mp4`); nil = none.
    public var live: LiveVideoFeed?

    public init(request: @escaping @Sendable (JSONObject, _ answer: @escaping @Sendable (JSONObject) -> Void) -> Void,
                storage: Storage, preview: PreviewFeed? = nil, events: LiveEvents? = nil, live: LiveVideoFeed? = nil) {
        self.request = request
        self.storage = storage
        self.preview = preview
        self.events = events
        self.live = live
    }
}

/// The routes. Public: the login page, its script and style, `POST /api/login`.
/// Everything else needs a session; POST and DELETE also need the session's CSRF
/// token in `X-CSRF-Token` and, when the browser sends `Origin`, the same origin
/// as `Host`. Files are named by their DCF number only.
public final class WebApp: Sendable {
    let backend: WebBackend
    let passwordHash: String
    public let sessions: WebSessions
    public let throttle: LoginThrottle
    /// API tokens for machines (WebApp+Tokens.swift); nil = none accepted.
    public let tokens: WebTokens?
    private let log = Log("shutter.web")
    private let streams = Mutex([ObjectIdentifier: any WebStream]())
    private let loginLock = PlainLock()
    /// How long a request waits for the service before it is answered 503.
    let askDeadline: Double
    static let perPageDefault = 24

    public init(backend: WebBackend, passwordHash: String, sessions: WebSessions = WebSessions(),
                throttle: LoginThrottle = LoginThrottle(), askDeadline: Double = WebApp.askDeadlineSeconds,
                tokens: WebTokens? = nil) {
        self.backend = backend
        self.passwordHash = passwordHash
        self.sessions = sessions
        self.throttle = throttle
        self.tokens = tokens
        self.askDeadline = askDeadline
    }

    public func handle(_ r: WebRequest) -> WebResponse {
        var response = route(r)
        response.headers += [("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
                             ("X-Frame-Options", "DENY")]
        if response.contentType.hasPrefix("text/html") {
            response.headers.append(("Content-Security-Policy",
                                     "default-src 'self'; img-src 'self' blob:; media-src 'self' blob:; frame-ancestors 'none'; form-action 'self'"))
        }
        return response
    }

    private func route(_ r: WebRequest) -> WebResponse {
        let parts = r.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let path = Array(parts)
        // Public.
        switch (r.method, r.path) {
        case ("GET", "/login"), ("HEAD", "/login"): return WebPage.response("login.html", r)
        case ("POST", "/api/login"): return login(r)
        default: break
        }
        let file = r.method == "GET" || r.method == "HEAD" ? WebPage.staticFile(r.path) : nil
        if let file, WebPage.publicFiles.contains(file.name) { return WebPage.response(file, r) }
        // A machine's API token when one is sent (WebApp+Tokens.swift), else the session.
        var sessionID: String?, csrf: String?
        if r.header("Authorization") != nil {
            if let refusal = tokenRefusal(r) { return refusal }
        } else {
            guard let (id, session) = sessions.session(cookieHeader: r.header("Cookie")) else {
                if r.method == "GET" && r.path == "/" {
                    return WebResponse(status: 303, contentType: "text/plain", body: .bytes(Data()), headers: [("Location", "/login")])
                }
                let refusal = WebResponse.error(401, "not logged in: POST /api/login with {\"password\":…} first, "
                                                + "or send an API token (Authorization: Bearer TOKEN)")
                return Self.challenges(r) ? refusal.with(header: Self.basicChallenge) : refusal
            }
            if r.method == "POST" || r.method == "DELETE" {
                if let refusal = checkStateChange(r, session: session) { return refusal }
            }
            (sessionID, csrf) = (id, session.csrf)
        }
        if let file { return WebPage.response(file, r) }
        let p = path.map(String.init)
        switch (r.method, p.count, p.first ?? "") {
        case ("GET", 1, ""), ("HEAD", 1, ""): return WebPage.response("index.html", r)
        case ("POST", _, "api") where p == ["api", "logout"]:
            guard let sessionID else { return .error(400, "an API token is no session: `shutterctl web-token revoke NAME` ends it") }
            sessions.end(sessionID)
            return WebResponse.json(200, ["ok": .bool(true)]).with(header: ("Set-Cookie", cookie("", r, maxAge: 0)))
        case ("GET", _, "api") where p == ["api", "session"]:
            guard let csrf else { return .error(400, "an API token is no session: it needs no CSRF token") }
            return .json(200, ["ok": .bool(true), "csrf": .string(csrf)])
        case ("GET", _, "api") where p == ["api", "status"]: return service(["cmd": .string("status")])
        case ("POST", _, "api") where p == ["api", "photo"]: return service(["cmd": .string("photo")])
        case ("POST", _, "api") where p == ["api", "record"]:
            guard case .object(let o)? = try? JSONParser.parse(String(decoding: r.body, as: UTF8.self)).value,
                  case .string(let action)? = o["action"], action == "start" || action == "stop" else {
                return .error(400, "expected {\"action\":\"start\"} or {\"action\":\"stop\"}")
            }
            return service(["cmd": .string("record"), "action": .string(action)])
        case ("GET", _, "api") where p == ["api", "settings"]: return settings()
        case ("POST", _, "api") where p == ["api", "settings"]: return setSetting(r)
        case ("POST", _, "api") where p == ["api", "settings", "reset"]: return resetSetting(r)
        case ("POST", _, "api") where p == ["api", "focus"]: return focus(r)
        case ("GET", _, "api") where p == ["api", "files"]: return list(r)
        case ("GET", _, "api") where p == ["api", "camera"]: return service(["cmd": .string("camera")])
        case ("POST", _, "api") where p == ["api", "camera"]: return switchCamera(r)
        case ("DELETE", 3, "api") where p[1] == "files": return delete(p[2])
        case ("GET", 2, "files"), ("HEAD", 2, "files"): return FileSender.send(backend.storage, p[1], range: r.header("Range"))
        case ("GET", 3, "files") where p[2] == "thumbnail": return FileSender.thumbnail(backend.storage, p[1])
        case ("GET", 1, "preview.mjpg"): return preview()
        case ("GET", _, "api") where p == ["api", "snapshot.jpg"]: return snapshot()
        case ("GET", _, "api") where p == ["api", "events"]: return liveEvents()
        case ("GET", _, "api") where p == ["api", "live.mp4"]: return liveVideo()
        default:
            if p.first == "files" || (p.count >= 2 && p[0] == "api" && p[1] == "files" && r.method != "GET") {
                return .error(404, "no such file")
            }
            let routes = [["api", "status"], ["api", "events"], ["api", "photo"], ["api", "record"], ["api", "files"], ["api", "logout"],
                          ["api", "settings"], ["api", "settings", "reset"], ["api", "focus"], ["api", "snapshot.jpg"],
                          ["api", "camera"], ["api", "live.mp4"], [""]]
            if routes.contains(p) { return .error(405, "method \(r.method) not allowed here") }
            return .error(404, "not found")
        }
    }

    // MARK: Login and CSRF

    private func login(_ r: WebRequest) -> WebResponse {
        if let bad = checkOrigin(r) { return bad }
        // One login at a time: Argon2id commits 64 MiB per check, and the throttle's
        // verdict must see the failure of the attempt before (parallel tries from one
        // address would otherwise all be checked).
        loginLock.lock()
        defer { loginLock.unlock() }
        let wait = throttle.wait(for: r.client)
        if wait > 0 {
            let s = Int(wait.rounded(.up))
            return WebResponse.error(429, "too many wrong passwords from \(r.client): try again in \(s) s",
                                     ["retryAfterSeconds": .int(s)]).with(header: ("Retry-After", String(s)))
        }
        guard case .object(let o)? = try? JSONParser.parse(String(decoding: r.body, as: UTF8.self)).value,
              case .string(let password)? = o["password"] else {
            return .error(400, "expected {\"password\":\"…\"}")
        }
        guard PasswordHash.verify(password, against: passwordHash) else {
            let delay = Int(throttle.failed(r.client))
            log.warning("wrong web password from \(r.client); next try allowed in \(delay) s")
            return WebResponse.error(401, "wrong password; try again in \(delay) s", ["retryAfterSeconds": .int(delay)])
                .with(header: ("Retry-After", String(delay)))
        }
        throttle.succeeded(r.client)
        let (id, csrf) = sessions.create()
        log.notice("web login from \(r.client)")
        return WebResponse.json(200, ["ok": .bool(true), "csrf": .string(csrf)])
            .with(header: ("Set-Cookie", cookie(id, r, maxAge: Int(WebSessions.idleSeconds))))
    }

    private func cookie(_ value: String, _ r: WebRequest, maxAge: Int) -> String {
        "\(WebSessions.cookieName)=\(value); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Strict" + (r.tls ? "; Secure" : "")
    }

    /// A browser's cross-site request carries its Origin: it must be this server's own.
    private func checkOrigin(_ r: WebRequest) -> WebResponse? {
        guard let origin = r.header("Origin") else { return nil }
        let host = r.header("Host") ?? ""
        let expected = [(r.tls ? "https://" : "http://") + host]
        guard !host.isEmpty, expected.contains(origin) else {
            return .error(403, "cross-origin request refused (Origin \(origin), Host \(host))")
        }
        return nil
    }

    private func checkStateChange(_ r: WebRequest, session: WebSessions.Session) -> WebResponse? {
        if let bad = checkOrigin(r) { return bad }
        guard let token = r.header("X-CSRF-Token"), WebSessions.sameBytes(token, session.csrf) else {
            return .error(403, "missing or wrong X-CSRF-Token (the csrf value /api/login answered)")
        }
        return nil
    }

    // MARK: The service's requests

    /// One request on the control socket's path; its reply as it is, except that
    /// files are named by number, name and URL (`items`), never by their path on
    /// the card (issue 23: a client has no use for it, and it tells where the card
    /// is mounted). `refused`: the status of a refusal that is not "busy" (a bad
    /// setting is the client's: 400; a failed capture the service's: 500).
    func service(_ request: JSONObject, refused: Int = 500) -> WebResponse {
        guard let answer = ask(request) else { return Self.noAnswer(askDeadline) }
        return .json(Self.status(of: answer, refused: refused), withoutCardPaths(answer))
    }

    static func status(of reply: JSONObject, refused: Int) -> Int {
        reply["ok"] == .bool(true) ? 200 : (reply["busy"] == .bool(true) ? 409 : refused)
    }

    /// The reply with `files` as `items`, and the storage root cut from the words
    /// (an error may name a file: "DCIM/100SHUTR/SHTR0001.JPG" is enough).
    func withoutCardPaths(_ reply: JSONObject) -> JSONObject {
        var reply = reply
        if case .array(let files)? = reply.removeValue(forKey: "files") {
            reply["items"] = .array(files.compactMap { f -> JSONValue? in
                guard case .string(let path) = f, let n = Self.number(ofPath: path) else { return nil }
                let name = String(path.split(separator: "/").last ?? "")
                return .object(["number": .int(n.webNumber), "name": .string(name), "url": .string("/files/\(n.webNumber)")])
            })
        }
        let root = backend.storage.root.hasSuffix("/") ? backend.storage.root : backend.storage.root + "/"
        func scrub(_ v: JSONValue) -> JSONValue {
            switch v {
            case .string(let text): return .string(text.replacing(root, with: ""))
            case .array(let a): return .array(a.map(scrub))
            case .object(var o):
                o.removeValue(forKey: "storageRoot")
                return .object(o.mapValues(scrub))
            default: return v
            }
        }
        return reply.mapValues(scrub)
    }

    /// The service's own bound on a capture (a photo, a recording's start or stop:
    /// 45 s in CameraService) plus a margin. Past it the service is wedged: the
    /// connection's thread is let go with a 503 rather than held (issue 23).
    public static let askDeadlineSeconds = 45.0 + 15.0

    static func noAnswer(_ deadline: Double) -> WebResponse {
        WebResponse.error(503, "the camera service did not answer within \(Int(deadline.rounded(.up))) s; "
                          + "try again shortly (the service's log says why)").with(header: ("Retry-After", "5"))
    }

    /// The service's reply to one request, waited for on this connection's thread
    /// for at most `askDeadline`; nil when it did not come.
    func ask(_ request: JSONObject) -> JSONObject? {
        let answer = BlockingAnswer<JSONObject>()
        backend.request(request) { answer.give($0) }
        guard let reply = answer.wait(timeout: askDeadline) else {
            log.error("the service did not answer \(request["cmd"]?.rendered(pretty: false) ?? "a request") within \(askDeadline) s: web request answered 503")
            return nil
        }
        return reply
    }

    static func number(ofPath path: String) -> DCFNumber? {
        let comps = path.split(separator: "/")
        guard comps.count >= 2, let d = DCFNumber.directoryNumber(String(comps[comps.count - 2])),
              let f = DCFNumber.fileNumber(String(comps[comps.count - 1])) else { return nil }
        return DCFNumber(directory: d, file: f.file)
    }

    // MARK: Files

    private func list(_ r: WebRequest) -> WebResponse {
        var page = 1, perPage = Self.perPageDefault
        do throws(RequestNumber.Refusal) {
            // Bounded before the arithmetic below: (page - 1) * perPage stays below 10^9.
            if let text = r.query("page") { page = try RequestNumber.page.integer(text: text) }
            if let text = r.query("perPage") { perPage = try RequestNumber.perPage.integer(text: text) }
        } catch {
            return .error(400, error.message)
        }
        let all = backend.storage.finishedMedia()
        let pageCount = max(1, (all.count + perPage - 1) / perPage)
        let items = all.dropFirst((page - 1) * perPage).prefix(perPage).map { item -> JSONValue in
            var o: JSONObject = ["number": .int(item.number.webNumber), "name": .string(item.fileName),
                                 "directory": .string(item.number.directoryName),
                                 "kind": .string(item.kind.rawValue), "bytes": .int(Int(item.bytes)),
                                 "modified": .double(item.modified), "url": .string("/files/\(item.number.webNumber)")]
            if item.kind == .photo || item.hasPoster {
                o["thumbnail"] = .string("/files/\(item.number.webNumber)/thumbnail")
            }
            // With uploads on: whether a verified copy is on the remote (the page marks it).
            if backend.storage.uploadsOn {
                o["uploaded"] = .bool(UploadRecords.isVerified(item, root: backend.storage.root))
            }
            return .object(o)
        }
        return .json(200, ["ok": .bool(true), "page": .int(page), "perPage": .int(perPage), "pageCount": .int(pageCount),
                           "itemCount": .int(all.count), "items": .array(items)])
    }

    /// The service's `delete` (CardFiles: the one rule, as `shutterctl delete`): a number, or `last`.
    private func delete(_ text: String) -> WebResponse {
        guard text == "last" || DCFNumber(webNumber: Substring(text)) != nil else { return .error(404, "no such file") }
        guard let reply = ask(["cmd": .string("delete"), "file": .string(text)]) else { return Self.noAnswer(askDeadline) }
        if reply["ok"] == .bool(true), case .object(let gone)? = reply["deleted"], let number = gone["number"] {
            return .json(200, ["ok": .bool(true), "deleted": number, "name": gone["name"] ?? .null])
        }
        let status = reply["notFound"] == .bool(true) ? 404 : Self.status(of: reply, refused: 500)
        return .json(status, withoutCardPaths(reply))
    }

    /// `{"camera":"next"}` (or an index or a model): the service's `camera` switch.
    private func switchCamera(_ r: WebRequest) -> WebResponse {
        guard case .object(let o)? = try? JSONParser.parse(String(decoding: r.body, as: UTF8.self)).value,
              case .string(let camera)? = o["camera"], !camera.isEmpty else {
            return .error(400, "expected {\"camera\":\"next\"} (or a camera's index or model)")
        }
        return service(["cmd": .string("camera"), "camera": .string(camera)])
    }

    /// The live preview: a JPEG part per frame the service publishes (≤ 5 per second).
    private func preview() -> WebResponse {
        guard let feed = backend.preview else { return .error(404, "no live preview") }
        guard let stream = feed.open() else {
            return .error(503, "too many previews open (at most \(PreviewFeed.maxViewers)); close one")
        }
        keep(stream, stream.life)
        return WebResponse(status: 200, contentType: "multipart/x-mixed-replace; boundary=\(MJPEGStream.boundary)",
                           body: .stream(stream), headers: [("Cache-Control", "no-store")])
    }

    /// At most this many `/api/events` watchers (each holds a connection).
    static let maxEventWatchers = 16

    /// Server-Sent Events: the state, files saved and deleted, settings, the camera.
    private func liveEvents() -> WebResponse {
        guard let events = backend.events else { return .error(404, "no live events") }
        let open = streams.withLock { $0.values.filter { $0 is LiveEventStream }.count }
        guard open < Self.maxEventWatchers else {
            return WebResponse.error(503, "too many event streams open (at most \(Self.maxEventWatchers)); close one")
                .with(header: ("Retry-After", "5"))
        }
        let stream = LiveEventStream(events: events) { [weak self] in self?.webEvent($0) }
        keep(stream, stream.life)
        return WebResponse(status: 200, contentType: "text/event-stream", body: .stream(stream),
                           headers: [("Cache-Control", "no-store"), ("X-Accel-Buffering", "no")])
    }

    /// A live event as the page sees it: files by number, name and URL (never their
    /// path on the card, as everywhere in the API), the card's root cut from words.
    func webEvent(_ e: LiveEvent) -> JSONObject? {
        var data = e.data
        if case .string(let path)? = data.removeValue(forKey: "path") {
            guard let n = Self.number(ofPath: path) else { return nil }
            data["number"] = .int(n.webNumber)
            if e.type == "file" {
                data["url"] = .string("/files/\(n.webNumber)")
                if data["kind"] == .string("photo") { data["thumbnail"] = .string("/files/\(n.webNumber)/thumbnail") }
            }
        }
        return withoutCardPaths(data)
    }

    /// Keeps an open stream until it closes (`closeStreams` ends those left).
    func keep(_ stream: any WebStream, _ life: StreamLife) {
        let id = ObjectIdentifier(stream)
        streams.withLock { $0[id] = stream }
        life.whenClosed { [weak self] in _ = self?.streams.withLock { $0.removeValue(forKey: id) } }
    }

    /// Ends every open stream (before the server stops, so their parked connections end).
    func closeStreams() {
        let open = streams.withLock { s -> [any WebStream] in let v = Array(s.values); s.removeAll(); return v }
        open.forEach { $0.close() }
    }
}

extension WebResponse {
    func with(header: (String, String)) -> WebResponse {
        var r = self
        r.headers.append(header)
        return r
    }
}
