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
import ShutterWeb

/// Starts the web page when `web.enabled`: on the socket systemd passed (socket
/// activation: shutterd itself has no network), else on `web.listen`. Its
/// requests go through the control socket's own path to the same service.
enum WebFrontend {
    /// The server; nil when the page is off or its configuration keeps it off (said in the
    /// log: no password, unreadable TLS files); a failure to listen is retried by the caller.
    static func start(config: ShutterConfig, service: CameraService, preview: PreviewFeed?, tokens: WebTokens? = nil,
                      live: LiveVideoFeed? = nil)
        -> Result<WebServer?, WebStartFailure>
    {
        let log = Log("shutter.web")
        let inherited = WebServer.systemdSocket()
        guard config.web.enabled else {
            if inherited != nil { log.warning("systemd passed a web socket but web.enabled is false: the web page stays off") }
            return .success(nil)
        }
        let hash = config.web.passwordHash
        guard !hash.isEmpty else {
            log.error("web page not started: no password set. Run `shutterctl web-password`, put the hash it prints in "
                      + "web.passwordHash, and restart shutterd")
            return .success(nil)
        }
        guard PasswordHash.isValid(hash) else {
            log.error("web page not started: web.passwordHash is not an Argon2id hash libsodium can read; "
                      + "make a new one with `shutterctl web-password`")
            return .success(nil)
        }
        var tls: (certificatePEM: String, keyPEM: String)?
        if !config.web.tlsCertificate.isEmpty {
            do {
                tls = (String(decoding: try PlainIO.readFile(config.web.tlsCertificate), as: UTF8.self),
                       String(decoding: try PlainIO.readFile(config.web.tlsKey), as: UTF8.self))
            } catch {
                log.error("web page not started: cannot read web.tlsCertificate/web.tlsKey (\(error))")
                return .success(nil)
            }
        }
        let backend = WebBackend(request: { request, answer in
            // The control socket's own path: the same checks, the same loop, the same reply.
            let line = Data(JSONValue.object(request).rendered(pretty: false).utf8)
            let reply = Reply { reply in
                let data = ControlCoding.encode(reply)
                guard case .object(let o)? = try? JSONParser.parse(String(decoding: data, as: UTF8.self)).value else {
                    return answer(["ok": .bool(false), "error": .string("internal error: unreadable reply")])
                }
                answer(o)
            }
            switch ControlServer.check(line) {
            case .failure(let refusal): reply.send(refusal.reply)
            case .success(let command): service.post(.request(command, reply))
            }
        }, storage: service.storage, preview: preview, events: service.events, live: live)
        let app = WebApp(backend: backend, passwordHash: hash, tokens: tokens)
        let listen = ListenAddress(parsing: config.web.listen)!  // validated with the configuration
        do {
            let server = try WebServer(app: app, listener: inherited.map { .inherited(fd: $0) } ?? .address(listen), tls: tls)
            let scheme = tls == nil ? "http" : "https"
            if inherited != nil {
                log.notice("web page on the socket systemd passed (\(scheme), port \(server.port))")
            } else {
                let shown = ListenAddress(parsing: "\(listen.host.contains(":") ? "[\(listen.host)]" : listen.host):\(server.port)")!
                log.notice("web page on \(scheme)://\(shown)/")
            }
            return .success(server)
        } catch {
            return .failure(WebStartFailure(message: "cannot listen on \(config.web.listen): \(error)"))
        }
    }
}

/// Why the web page could not start now (it is tried again).
struct WebStartFailure: Error {
    var message: String
}
