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
import ShutterWeb

/// `web-token` on the control socket (`shutterctl web-token add|list|revoke`), answered
/// on the connection's own thread rather than by the loop: the tokens have nothing to
/// do with the camera, and their file's fsync must not hold the loop. The service owns
/// the store the web page checks, so a revocation applies to the very next request.
enum WebTokenRequests {
    static func answer(_ command: ServiceCommand.WebTokenCommand, tokens: WebTokens) -> ControlReply {
        var reply = ControlReply(ok: true)
        switch command {
        case let .add(name, scope):
            do {
                let (token, info) = try tokens.add(name: name, scope: scope)
                reply.token = token
                reply.tokens = [listing(info)]
            } catch {
                return .failure(error.message)
            }
        case .list:
            reply.tokens = tokens.list().map(listing)
        case .revoke(let name):
            do {
                reply.tokens = [listing(try tokens.revoke(name: name))]
                reply.note = "revoked \"\(name)\": its next request is refused"
            } catch {
                return .failure(error.message)
            }
        }
        return reply
    }

    static func listing(_ info: WebTokens.Info) -> WebTokenListing {
        func text(_ t: Double) -> String { ISO8601Text.utc(t) }
        return WebTokenListing(name: info.name, scope: info.scope.rawValue, created: text(info.created),
                               lastUsed: info.lastUsed.map(text))
    }
}
