// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// `shutterctl web-token add NAME --scope view|control | list | revoke NAME`: API
/// tokens for machines (Home Assistant, scripts). The service makes and keeps them
/// (only a digest, in a file beside the runtime settings) and answers on the control
/// socket, so a revocation applies at once and the file stays the service user's.
enum WebTokenCommand {
    static let usage = "usage: shutterctl web-token add NAME --scope view|control | list | revoke NAME"

    static func run(_ args: [String], socket: String) -> Int32 {
        var request = ControlRequest(cmd: "web-token")
        switch args.first {
        case "add":
            var rest = Array(args.dropFirst())
            if let i = rest.firstIndex(of: "--scope") {
                guard i + 1 < rest.count else { return fail("--scope needs view or control\n\(usage)", code: 64) }
                request.scope = rest[i + 1]
                rest.removeSubrange(i...(i + 1))
            }
            guard rest.count == 1, let scope = request.scope else {
                return fail("add needs a name and a scope, e.g. `shutterctl web-token add home-assistant --scope view`", code: 64)
            }
            guard scope == "view" || scope == "control" else {
                return fail("--scope is view (reads) or control (also photos, recordings, settings, deletions), not \"\(scope)\"", code: 64)
            }
            request.action = "add"
            request.name = rest[0]
        case "list" where args.count == 1:
            request.action = "list"
        case "revoke" where args.count == 2:
            request.action = "revoke"
            request.name = args[1]
        default:
            return fail(usage, code: 64)
        }
        let reply: ControlReply
        do {
            reply = try ControlClient.send(request, to: socket, timeout: .seconds(30)).0
        } catch {
            return fail("\(error)", code: 69)
        }
        guard reply.ok else { return fail(reply.error ?? "failed") }
        if request.action == "add", let token = reply.token {
            // The token alone on stdout (TOKEN=$(shutterctl web-token add …)); the words on stderr.
            print(token)
            PlainIO.write(2, """
                This token is shown once: keep it now. Send it as `Authorization: Bearer TOKEN`, or as the
                password of HTTP Basic (any user name). Revoke it with `shutterctl web-token revoke \(request.name ?? "NAME")`.

                """)
            return 0
        }
        if let d = try? PlainJSON.encode(reply) { print(String(decoding: d, as: UTF8.self)) }
        return 0
    }

    private static func fail(_ message: String, code: Int32 = 1) -> Int32 {
        PlainIO.write(2, "shutterctl web-token: \(message)\n")
        return code
    }
}
