// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import ShutterBuild
import ShutterCore

/// One POST of an event, by curl (HTTP and TLS, the system's CAs; a timeout for the whole
/// request and for the connection). Blocking: on the webhook's queue only.
struct WebhookSender: Sendable {
    let curl: String
    let url: String
    let timeoutSeconds: Int
    /// The CA certificates an https:// receiver is checked against; nil: the system's.
    var caFile: String? = nil
    /// A private folder for the body and an attachment (the service's /tmp).
    let scratch: String
    let process: ChildProcess

    /// Posts `body` (JSON) as the request, or with `attachment` (a JPEG's path) as
    /// multipart/form-data ("event" and "file"). nil when the receiver answered 2xx, else why not.
    func post(id: String, body: [UInt8], attachment: String?) -> String? {
        let bodyPath = PlainIO.path(scratch, "event.json")
        let fd = open(bodyPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return "cannot write \(bodyPath): \(String(cString: strerror(errno)))" }
        PlainIO.write(fd, body)
        close(fd)
        defer { unlink(bodyPath) }
        var args = [curl, "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST",
                    "--max-time", "\(timeoutSeconds)", "--connect-timeout", "\(min(timeoutSeconds, 10))",
                    "-H", "X-Shutter-Event-Id: \(id)", "-H", "User-Agent: Shutter/\(ShutterVersion.string)"]
        if let caFile { args += ["--cacert", caFile] }
        if let attachment {
            args += ["-F", "event=<\(bodyPath);type=application/json", "-F", "file=@\(attachment);type=image/jpeg"]
        } else {
            args += ["-H", "Content-Type: application/json", "--data-binary", "@\(bodyPath)"]
        }
        args.append(url)
        let outcome: ChildProcess.Outcome
        do {
            outcome = try process.run(args, environment: ["PATH=/usr/bin:/bin", "HOME=\(scratch)", "LANG=C.UTF-8"],
                                      background: false, limit: 64)
        } catch {
            return error.description
        }
        let code = Int(String(decoding: outcome.stdout, as: UTF8.self).trimmedWhitespace) ?? 0
        if outcome.succeeded, (200..<300).contains(code) { return nil }
        if code > 0 { return "HTTP \(code) from \(url)" }
        let said = outcome.stderr.trimmedWhitespace
        return said.isEmpty ? "curl ended with status \(outcome.status ?? -1)" : said
    }
}
