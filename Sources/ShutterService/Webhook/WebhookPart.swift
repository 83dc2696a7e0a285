// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import ShutterCore
import ShutterStorage
import Synchronization

/// The webhook as a part: each photo and clip (`webhook.events`) becomes an event kept on
/// the card (`WebhookQueue`) and POSTed to `webhook.url`, oldest first, one at a time,
/// tried again (5 s doubling to 60 s) until the receiver answers 2xx, which removes it. The
/// header `X-Shutter-Event-Id` names each event, the same on every try, so a receiver that
/// answered but whose answer was lost can tell a repeat. Runs where the network is: in the
/// connector, or in shutterd without one.
final class WebhookPart: ServicePart {
    private struct Running: Sendable {
        let queue: WebhookQueue
        let sender: WebhookSender
        let link: any CameraLink
        let watch: Int
        let root: String
        let storage: Storage
    }

    private let config: ShutterConfig
    private let running = Mutex<Running?>(nil)
    /// Captures seen, not yet written to the queue (the events' callback does no I/O).
    private let seen = Mutex<[WebhookEvent]>([])
    private let timer = Mutex<(any DispatchSourceTimer)?>(nil)
    private let wake = Wakeup()
    private let jobs = DispatchQueue(label: "shutter.webhook")
    /// Where a capture seen is written to the queue at once, not behind the posts under way.
    private let keeping = DispatchQueue(label: "shutter.webhook.keep")
    private let log = Log("shutter.webhook")

    /// What to check for a failed post: the certificate, or the URL and the receiver.
    static func advice(_ problem: String, _ w: ShutterConfig.Webhook) -> String {
        let p = problem.lowercased()
        if p.contains("certificate") || p.contains("ssl") {
            return w.caFile.isEmpty
                ? "the receiver's certificate is not signed by a CA this system knows: put its CA certificate in a file "
                    + "and name it in webhook.caFile"
                : "the receiver's certificate is not signed by the CA in webhook.caFile (\(w.caFile)), or names another host "
                    + "than webhook.url's (\(w.url))"
        }
        return "check webhook.url (\(w.url)) and that the receiver runs"
    }

    /// curl's first line (its later lines point to its web site).
    static func firstLine(_ s: String) -> String { String(s.split(separator: "\n").first ?? Substring(s)) }

    init(config: ShutterConfig) { self.config = config }

    var name: String { "the webhook" }

    func start(_ service: CameraService) -> PartStart {
        start(link: ServiceLink(service: service), storage: service.storage)
    }

    func start(link: any CameraLink, storage: Storage) -> PartStart {
        guard config.webhook.enabled else { return .off }
        guard access(config.webhook.curl, X_OK) == 0 else {
            let why = "webhook.curl: \(config.webhook.curl) is not there or not runnable: install curl (`sudo apt install "
                + "curl`) or set webhook.curl to its path"
            link.report(part: "webhook", trouble: why)
            return .failed(why)
        }
        let caFile = config.webhook.caFile
        guard caFile.isEmpty || access(caFile, R_OK) == 0 else {
            let why = "webhook.caFile: \(caFile) cannot be read (\(String(cString: strerror(errno)))): put the receiver's CA "
                + "certificate where the service can read it (/etc/shutter/, mode 0644) or set webhook.caFile to \"\""
            link.report(part: "webhook", trouble: why)
            return .failed(why)
        }
        var template = Array("/tmp/shutter-webhook-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            return .failed("cannot make a folder in /tmp for the webhook: \(String(cString: strerror(errno)))")
        }
        let sender = WebhookSender(curl: config.webhook.curl, url: config.webhook.url,
                                   timeoutSeconds: config.webhook.timeoutSeconds, caFile: caFile.isEmpty ? nil : caFile,
                                   scratch: String(cString: made), process: ChildProcess())
        let wanted = Set(config.webhook.events)
        let wake = self.wake
        let watch = link.watch { [weak self] event in
            guard event.type == "file", case .string(let path)? = event.data["path"],
                  case .string(let kind)? = event.data["kind"] else { return }
            let what = kind == "video" ? "clip" : kind
            guard wanted.contains(what) else { return }
            let wall = SystemWallClock().now()
            var e = WebhookEvent(event: what, file: path, bytes: 0,
                                 time: Double(wall.secondsSinceEpoch) + Double(wall.nanoseconds) / 1e9,
                                 timeTrusted: wall.isTrusted)
            if case .string(let s)? = event.data["source"] { e.source = s }
            if case .string(let t)? = event.data["trigger"] { e.trigger = t }
            self?.seen.withLock { [e] in $0.append(e) }
            self?.keeping.async { [weak self] in
                self?.keepSeen()
                wake.notify()
            }
        }
        timer.withLock { $0 = Self.ticks(wake) }
        running.withLock {
            $0 = Running(queue: WebhookQueue(root: storage.root, sync: storage.cardSync), sender: sender, link: link,
                         watch: watch, root: storage.root, storage: storage)
        }
        log.notice("webhook: each \(config.webhook.events.joined(separator: " and ")) posted to \(config.webhook.url); "
                   + "the queue in \(PlainIO.path(storage.root, WebhookQueue.folder))")
        wake.notify()
        return .running
    }

    func run(_ service: CameraService) async { await run() }

    func run() async {
        guard let r = running.withLock({ $0 }) else { return }
        let attach = config.webhook.attach, camera = Self.cameraName(config)
        var said: String?
        while !Task.isCancelled {
            let problem: String? = await Blocking.run(on: jobs) {
                Self.deliverDue(r, attach: attach, camera: camera)
            }
            if problem != said {
                if let problem {
                    let said = "\(Self.firstLine(problem)): \(Self.advice(problem, config.webhook)); the "
                        + "events wait on the card and are posted again"
                    log.warning("webhook: \(said)")
                    r.link.report(part: "webhook", trouble: said)
                } else if said != nil {
                    log.notice("webhook: posting again")
                }
                said = problem
            }
            await wake.wait()
        }
    }

    func stop() {
        timer.withLock { $0?.cancel(); $0 = nil }
        guard let r = running.withLock({ s in defer { s = nil }; return s }) else { return }
        r.link.stopWatching(r.watch)
        r.sender.process.stop()
        rmdir(r.sender.scratch)
    }

    /// The captures seen so far, into the queue.
    private func keepSeen() {
        guard let r = running.withLock({ $0 }) else { return }
        let fresh: [WebhookEvent] = seen.withLock { s in defer { s.removeAll() }; return s }
        Self.keep(fresh, in: r)
    }

    /// The seen captures, durably in the queue (with their size, the file being whole now).
    private static func keep(_ fresh: [WebhookEvent], in r: Running) {
        for var e in fresh {
            if e.file.hasPrefix(r.root + "/") { e.file = String(e.file.dropFirst(r.root.count + 1)) }
            var st = stat()
            if stat(PlainIO.path(r.root, e.file), &st) == 0 { e.bytes = UInt64(st.st_size) }
            do {
                try r.queue.add(e)
            } catch {
                Log("shutter.webhook").error("webhook: cannot keep the event of \(e.file) in "
                                             + "\(r.queue.records.directory): \(error)")
            }
        }
    }

    /// Posts what is due, oldest first, until one fails; the failure (nil: all went, or nothing was due).
    private static func deliverDue(_ r: Running, attach: ShutterConfig.Webhook.Attach, camera: String) -> String? {
        let now = Date().timeIntervalSince1970
        for key in r.queue.keys() {
            guard var e = r.queue.records.read(key) else { continue }
            if let next = e.nextTry, next > now { return e.lastError }  // in order: later ones wait too
            let body = Array(JSONValue.object(payload(e, id: key, camera: camera)).rendered(pretty: false).utf8)
            if let why = r.sender.post(id: key, body: body, attachment: attachment(e, attach, r)) {
                e.attempts += 1
                e.lastError = why
                // A refusal that trying again will not change (a 4xx but 408 and 429: a wrong
                // URL, a body too large): three tries, then the event is dropped and said, so
                // it does not hold back every later one.
                if Self.permanent(why), e.attempts >= 3 {
                    Log("shutter.webhook").error("webhook: dropped the event of \(e.file) after \(e.attempts) tries: \(why)")
                    try? r.queue.records.remove(key, sync: r.queue.sync)
                    continue
                }
                e.nextTry = now + min(60, 5 * Double(1 << min(6, e.attempts - 1)))
                try? r.queue.records.write(e, key, durable: false, sync: r.queue.sync)
                return why
            }
            do {
                try r.queue.records.remove(key, sync: r.queue.sync)
            } catch {
                return "cannot remove the posted event \(key): \(error)"
            }
        }
        return nil
    }

    /// "HTTP 404 from …": a 4xx other than 408 (timeout) and 429 (too many requests).
    static func permanent(_ why: String) -> Bool {
        guard why.hasPrefix("HTTP 4"), let code = Int(why.dropFirst(5).prefix(3)) else { return false }
        return code != 408 && code != 429
    }

    /// What is posted: the capture, in the order fields are documented (docs/webhook.md).
    static func payload(_ e: WebhookEvent, id: String, camera: String) -> JSONObject {
        var o: JSONObject = ["id": .string(id), "event": .string(e.event), "camera": .string(camera),
                             "file": .string(PlainIO.lastComponent(e.file)), "path": .string(e.file),
                             "bytes": .int(Int(clamping: e.bytes)), "attempt": .int(e.attempts + 1)]
        if e.timeTrusted {
            o["time"] = .string(Date(timeIntervalSince1970: e.time).formatted(.iso8601))
        }
        if let number = DCFNumber(webFile: e.file) { o["number"] = .int(number.webNumber) }
        if let s = e.source { o["source"] = .string(s) }
        if let t = e.trigger { o["trigger"] = .string(t) }
        return o
    }

    /// The JPEG to attach: the photo itself or its thumbnail; for a clip its poster.
    private static func attachment(_ e: WebhookEvent, _ attach: ShutterConfig.Webhook.Attach, _ r: Running) -> String? {
        guard attach != .none else { return nil }
        let path = PlainIO.path(r.root, e.file)
        if e.event == "clip" {
            let poster = String(path.dropLast(PlainIO.pathExtension(path).count)) + "THM"
            return access(poster, R_OK) == 0 ? poster : nil
        }
        if attach == .photo { return path }
        guard let number = DCFNumber(webFile: e.file), let thumb = r.storage.thumbnail(number) else { return nil }
        let out = PlainIO.path(r.sender.scratch, "thumbnail.jpg")
        let fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        PlainIO.write(fd, [UInt8](thumb))
        close(fd)
        return out
    }

    /// The camera's name in the event: mqtt.name, else the host's.
    static func cameraName(_ config: ShutterConfig) -> String {
        if !config.mqtt.name.isEmpty { return config.mqtt.name }
        return ProcessInfo.processInfo.hostName.lowercased()
    }

    private static func ticks(_ wake: Wakeup) -> any DispatchSourceTimer {
        let t = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "shutter.webhook.timer"))
        t.schedule(deadline: .now() + .seconds(2), repeating: .seconds(2))
        t.setEventHandler { wake.notify() }
        t.resume()
        return t
    }
}

extension DCFNumber {
    /// The number of "DCIM/100SHUTR/SHTR0001.JPG" (or a path ending so).
    init?(webFile path: String) {
        let parts = path.split(separator: "/")
        guard parts.count >= 2, let d = DCFNumber.directoryNumber(String(parts[parts.count - 2])),
              let (f, _) = DCFNumber.fileNumber(String(parts[parts.count - 1])) else { return nil }
        self.init(directory: d, file: f)
    }
}
