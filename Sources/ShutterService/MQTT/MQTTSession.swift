// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ShutterControl
import ShutterCore
import ShutterStorage
import Synchronization

/// The camera on the broker: what the service's live events say goes out (state and
/// status retained, events in order through the bounded outbox, the last photo's
/// thumbnail), commands come in as the control socket's requests. Everything here runs
/// on one serial queue: libmosquitto's callbacks and the live events only hop onto it,
/// so the network thread and the loop never wait for this.
final class MQTTSession: Sendable {
    let settings: MQTTSettings
    private let queue = DispatchQueue(label: "shutter.mqtt")
    let link: any CameraLink
    private let log = Log("shutter.mqtt")
    private let statusWake: AsyncStream<Void>.Continuation

    /// What the queue's work reads and changes. Taken on `queue` only (it is the queue's,
    /// so never waited for), for a whole piece of work: the functions below that take
    /// `_ s: inout State` run under it. Nothing called under it comes back here but by
    /// hopping onto the queue.
    private struct State {
        var client: MQTTClient?
        var connected = false
        var everConnected = false
        var outbox = MQTTOutbox()
        /// The last retained message of each topic we own (state, status, thumbnail): sent
        /// again whenever the connection comes back.
        var retained: [(topic: String, payload: Data)] = []
        var stateWord: String?
        /// Each kind of trouble logged at most once a while.
        var said = Said()
        var takeover = MQTTTakeover()
        var forgotten = false
        /// After a TLS failure, the next start of the network thread (1 s doubling to 60 s).
        var tlsRetrySeconds = 1
        /// The other discovery form's configs met at this connection, until the probe returns.
        var handover = MQTTDiscoveryHandover()
        /// Which connection's probe is awaited (its wait ends after `probeWaitSeconds`).
        var connection = 0
    }
    private let state = Mutex(State())
    /// The stop's last words: the `offline` message id, and a signal once it (and then the
    /// DISCONNECT) went out.
    private let stopping = Mutex<(offlineMid: Int32?, signal: DispatchSemaphore?)>((nil, nil))

    init(settings: MQTTSettings, link: any CameraLink, statusWake: AsyncStream<Void>.Continuation) {
        self.settings = settings
        self.link = link
        self.statusWake = statusWake
    }

    // MARK: Starting and stopping

    func start() {
        queue.async { [self] in
            let s = settings
            let options = MQTTClient.Options(
                clientID: "shutter-\(s.name)", broker: s.broker, username: s.username, password: s.password,
                caFile: s.caFile, certFile: s.certFile, keyFile: s.keyFile, keepAliveSeconds: Self.keepAliveSeconds,
                will: (s.availability, "offline"), reconnectDelay: (1, 60))
            do {
                let c = try MQTTClient(options) { [weak self] e in self?.fromNetwork(e) }
                log.notice("MQTT: connecting to \(s.broker) as \"\(s.name)\" under \(s.topic)")
                state.withLock { state in
                    state.client = c
                    firstConnection(c, retryIn: 1, &state)
                }
            } catch {
                log.error("MQTT unavailable: \(error); the camera works without it")
            }
        }
    }

    /// Until a first connection starts (MQTTClient.connect): again after 1 s, doubling to 60 s.
    private func firstConnection(_ c: MQTTClient, retryIn seconds: Int, _ s: inout State) {
        guard s.client === c, !c.connect() else { return }
        queue.asyncAfter(deadline: .now() + .seconds(seconds)) { [weak self] in
            guard let self else { return }
            self.state.withLock { self.firstConnection(c, retryIn: min(seconds * 2, 60), &$0) }
        }
    }

    private static func uptime() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// The broker marks the camera offline (the Last Will) this long after its last word.
    static let keepAliveSeconds: Int32 = 20

    /// `offline` (retained) and a clean DISCONNECT, each waited for at most a second.
    func stop() {
        let signal = DispatchSemaphore(value: 0)
        stopping.withLock { $0.signal = signal }
        let wasConnected = queue.sync { [self] () -> Bool in
            state.withLock { s -> Bool in
                guard s.connected, let client = s.client else { return false }
                let mid = client.publish(settings.availability, Data("offline".utf8), qos: 1, retain: true)
                stopping.withLock { $0.offlineMid = mid }
                return mid != nil
            }
        }
        if wasConnected { _ = signal.wait(timeout: .now() + 1) }
        let ending = queue.sync { [self] () -> MQTTClient? in
            state.withLock { s in
                defer { s.client = nil }
                return s.client
            }
        }
        ending?.disconnect()
        if wasConnected { _ = signal.wait(timeout: .now() + 1) }
        ending?.close()
        statusWake.finish()
    }

    // MARK: From the network thread

    private func fromNetwork(_ e: MQTTClientEvent) {
        // The stop waits on these without the queue (which may be busy with a slow card).
        stopping.withLock { s in
            switch e {
            case .published(let mid) where mid == s.offlineMid: s.signal?.signal()
            case .disconnected where s.offlineMid != nil: s.signal?.signal()
            default: break
            }
        }
        queue.async { [self] in
            state.withLock { s in
                switch e {
                case .connected(let code): connectedEvent(code, &s)
                case .disconnected(let code, let reason): disconnectedEvent(code, reason, &s)
                case .tlsFailed(let reason): tlsFailedEvent(reason, &s)
                case .published(let mid):
                    s.outbox.acknowledged(mid)
                    pump(&s)
                case .message(let m): command(m, &s)
                }
            }
        }
    }

    private func connectedEvent(_ code: Int32, _ s: inout State) {
        guard code == 0 else {
            s.connected = false
            trouble(s.said.problems.say(log, "MQTT: \(settings.broker) refused the connection: \(MQTTClient.describeConnack(code)); "
                         + "check mqtt.username and mqtt.passwordFile. Retrying with backoff"))
            return
        }
        s.connected = true
        s.tlsRetrySeconds = 1
        let now = Self.uptime()
        s.takeover.opened(at: now)
        queue.asyncAfter(deadline: .now() + MQTTTakeover.steadySeconds) { [weak self] in
            guard let self, self.state.withLock({ $0.takeover.holds(openedAt: now) }) else { return }
            self.log.notice("MQTT: connected to \(self.settings.broker), and the connection holds again")
        }
        if s.takeover.flapping {
            _ = s.said.problems.reset()  // quiet while another client takes the id back and forth
        } else if let missed = s.said.problems.reset() {
            log.notice("MQTT: connected to \(settings.broker) (after \(missed) failed attempt\(missed == 1 ? "" : "s"))")
        } else if !s.everConnected {
            log.notice("MQTT: connected to \(settings.broker)")
        } else {
            log.notice("MQTT: connected to \(settings.broker) again")
        }
        s.everConnected = true
        guard let client = s.client else { return }
        client.publish(settings.availability, Data("online".utf8), qos: 1, retain: true)
        startDiscovery(&s)
        for r in s.retained { client.publish(r.topic, r.payload, qos: 1, retain: true) }
        client.subscribe(settings.command)
        // Home Assistant says "online" on <prefix>/status when it starts (or its MQTT
        // integration reloads): the configs go again, as its documentation asks.
        if settings.discovery { client.subscribe(settings.haStatus) }
        pump(&s)
    }

    private func disconnectedEvent(_ code: Int32, _ reason: String, _ s: inout State) {
        s.connected = false
        guard code != 0 else { return }
        if s.takeover.closed(at: Self.uptime()) {
            log.warning("MQTT: \(settings.broker) closed the connection right after it opened, \(MQTTTakeover.inARow) "
                        + "times in a row: another client is probably connected with this camera's client id "
                        + "\"shutter-\(settings.name)\" (two cameras with the same mqtt.name?). Give each camera its own "
                        + "mqtt.name; retrying quietly meanwhile")
            return
        }
        if s.takeover.flapping { return }
        let what = Self.tlsAdvice(reason, code: code, settings: settings).map { "TLS with \(settings.broker) failed (\(reason)): \($0)" }
            ?? "no connection to \(settings.broker) (\(reason))"
        let capacity = s.outbox.capacity
        trouble(s.said.problems.say(log, "MQTT: \(what); the camera works without it, events are kept (up to \(capacity)) "
                     + "and the client retries with backoff"))
    }

    /// A problem logged (not one held back by the rate limit) is the service's last error too.
    private func trouble(_ logged: String?) {
        if let logged { link.report(part: "MQTT", trouble: String(logged.dropFirst("MQTT: ".count))) }
    }

    /// libmosquitto's thread ended with the failure: said, then started again after a backoff.
    private func tlsFailedEvent(_ reason: String, _ s: inout State) {
        disconnectedEvent(MQTTClient.tlsErrorCode, reason, &s)
        guard let c = s.client else { return }
        c.stopLoop()
        let seconds = s.tlsRetrySeconds
        s.tlsRetrySeconds = min(seconds * 2, 60)
        queue.asyncAfter(deadline: .now() + .seconds(seconds)) { [weak self] in
            guard let self else { return }
            self.state.withLock { self.firstConnection(c, retryIn: 1, &$0) }
        }
    }

    /// What to do about a failed TLS connection (nil: not a TLS failure). libmosquitto
    /// reports OpenSSL's reason as an error line ("OpenSSL Error[0]: …"), the code alone
    /// is only "a TLS error" or errno's EPROTO.
    static func tlsAdvice(_ reason: String, code: Int32, settings: MQTTSettings) -> String? {
        guard settings.broker.tls, reason.contains("OpenSSL") || code == MQTTClient.tlsErrorCode else { return nil }
        let ca = settings.caFile.map { "the CA in mqtt.caFile (\($0))" } ?? "the system's CAs (/etc/ssl/certs; mqtt.caFile is not set)"
        if reason.contains("certificate verify failed") {
            return "the broker's certificate is not signed by \(ca), or does not name \(settings.broker.host): "
                + "set mqtt.caFile to the PEM certificate of the CA that signed the broker's certificate (the broker's "
                + "`cafile`), and mqtt.url's host to a name the certificate lists"
        }
        return "check that port \(settings.broker.port) speaks TLS (an mqtts:// URL needs the broker's TLS listener), and "
            + "mqtt.caFile (\(settings.caFile ?? "not set")), mqtt.certFile and mqtt.keyFile"
    }

    // MARK: Publishing

    /// At a connection: the check for the other form's configs started (MQTTDiscoveryHandover):
    /// once the probe returns (or after `probeWaitSeconds` without it), this form's configs go,
    /// or with discovery off (or forgotten) both forms' are cleared.
    private func startDiscovery(_ s: inout State) {
        guard let client = s.client else { return }
        s.connection += 1
        let connection = s.connection
        s.handover.begin()
        client.subscribe(settings.otherFormFilter)
        client.subscribe(settings.discoveryProbe, noLocal: false)
        client.publish(settings.discoveryProbe, Data("\(connection)".utf8), qos: 1, retain: false)
        queue.asyncAfter(deadline: .now() + Self.probeWaitSeconds) { [weak self] in
            guard let self else { return }
            self.state.withLock { s in
                guard s.connection == connection, s.handover.found != nil else { return }
                self.log.warning("MQTT: the broker did not return the discovery check on \(self.settings.discoveryProbe) "
                                 + "within \(Int(Self.probeWaitSeconds)) s; discovery sent without looking for older configs")
                self.finishDiscovery(&s)
            }
        }
    }

    static let probeWaitSeconds: Double = 5

    /// The probe returned: the configs, handing over what the other form left (in Home
    /// Assistant's order: marker, configs, old topics cleared).
    private func finishDiscovery(_ s: inout State) {
        guard let old = s.handover.finish(), let client = s.client else { return }
        if s.forgotten || !settings.discovery {
            // Off: this form's configs and whatever the other form left, so Home Assistant drops the device.
            publishDiscovery(clear: true, &s)
            for topic in old { client.publish(topic, Data(), qos: 1, retain: true) }
            return
        }
        for m in MQTTDiscoveryHandover.messages(settings, handingOver: old) {
            client.publish(m.topic, m.payload, qos: 1, retain: true)
        }
        if !old.isEmpty {
            log.notice("MQTT: Home Assistant's \(old.count) discovery config\(old.count == 1 ? "" : "s") of the "
                       + "\(settings.discoveryForm == .device ? "entity" : "device") form handed over to the "
                       + "\(settings.discoveryForm.rawValue) form (mqtt.discoveryForm)")
        }
    }

    /// This form's configs, or empty retained messages on their topics (which removes them).
    private func publishDiscovery(clear: Bool, _ s: inout State) {
        guard let client = s.client else { return }
        for c in MQTTDiscoveryHandover.configs(settings) {
            client.publish(c.topic, clear ? Data() : c.payload, qos: 1, retain: true)
        }
    }

    /// `shutterctl mqtt forget`: Home Assistant's configs removed (until the next start).
    func forget(_ done: @escaping @Sendable (Bool) -> Void) {
        queue.async { [self] in
            let connected = state.withLock { s -> Bool in
                s.forgotten = true
                if s.connected { publishDiscovery(clear: true, &s) }
                return s.connected
            }
            done(connected)
        }
    }

    /// A retained message of ours: published now if connected, and again at every reconnect.
    private func keep(_ topic: String, _ payload: Data, _ s: inout State) {
        if let i = s.retained.firstIndex(where: { $0.topic == topic }) {
            s.retained[i].payload = payload
        } else {
            s.retained.append((topic, payload))
        }
        if s.connected { s.client?.publish(topic, payload, qos: 1, retain: true) }
    }

    /// Events in order, a few at a time (MQTTOutbox).
    private func send(_ topic: String, _ payload: Data, _ s: inout State) {
        if s.outbox.enqueue(.init(topic: topic, payload: payload)) {
            let (dropped, capacity) = (s.outbox.dropped, s.outbox.capacity)
            s.said.dropLog.say(log, "MQTT: the broker is not taking events; dropped the oldest (\(dropped) so far, "
                        + "\(capacity) kept)")
        }
        pump(&s)
    }

    private func pump(_ s: inout State) {
        guard s.connected, let client = s.client else { return }
        let now = link.now
        while let m = s.outbox.next(now: now) {
            let mid = client.publish(m.topic, m.payload, qos: 1, retain: false)
            s.outbox.handed(m, mid: mid, now: now)
            if mid == nil { break }  // refused (back in front): again at the next acknowledgement or connection
        }
    }

    // MARK: From the service

    /// A live event (called under LiveEvents' lock: only hops onto the queue).
    func live(_ e: LiveEvent) {
        queue.async { [self] in
            state.withLock { s in
                if e.type == "state" {
                    keep(settings.state, MQTTMessages.data(e.data), &s)
                    let word = e.data["state"]
                    if case .string(let w)? = word, w != s.stateWord {
                        s.stateWord = w
                        statusWake.yield()
                    }
                } else if let g = MQTTMessages.gesture(e) {
                    send(settings.button, Data(g.utf8), &s)
                } else if let (type, number, json) = MQTTMessages.event(e, settings: settings) {
                    send(settings.event, MQTTMessages.data(json), &s)
                    if type == "photo", let n = number, let thumb = link.thumbnail(n) {
                        keep(settings.thumbnail, thumb, &s)
                    }
                    statusWake.yield()
                } else if ["setting", "camera", "uploaded", "upload-failed"].contains(e.type) {
                    statusWake.yield()  // the status carries them (flash mode, camera, the upload queue)
                }
            }
        }
    }

    func status(_ s: ServiceStatus) {
        queue.async { [self] in
            state.withLock { state in
                keep(settings.status, MQTTMessages.data(MQTTMessages.status(s, settings: settings,
                                                                           queued: state.outbox.queued.count,
                                                                           dropped: state.outbox.dropped)), &state)
            }
        }
    }

    /// Wakes the status publisher every `seconds` (the part's run loop reads the wakes).
    func statusTimer(seconds: Int) -> any DispatchSourceTimer {
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now() + .seconds(seconds), repeating: .seconds(seconds))
        t.setEventHandler { [statusWake] in statusWake.yield() }
        t.resume()
        return t
    }

    // MARK: Commands

    private func command(_ m: MQTTIncoming, _ s: inout State) {
        if m.topic == settings.discoveryProbe {
            if String(decoding: m.payload, as: UTF8.self) == "\(s.connection)" { finishDiscovery(&s) }
            return
        }
        if settings.isOtherFormConfig(m.topic) {
            s.handover.met(topic: m.topic, payload: m.payload)
            return
        }
        if m.topic == settings.haStatus {
            // (While the check is under way, its end sends them.)
            if String(decoding: m.payload, as: UTF8.self) == "online", settings.discovery, !s.forgotten, s.handover.found == nil {
                log.info("MQTT: Home Assistant is online: discovery sent again")
                publishDiscovery(clear: false, &s)
                for r in s.retained { s.client?.publish(r.topic, r.payload, qos: 1, retain: true) }
            }
            return
        }
        guard m.topic == settings.command else { return }
        if m.retained {
            // A retained command would fire at every start: never taken.
            s.said.retainedCommands.say(log, "MQTT: ignored a retained command on \(m.topic) (commands are never retained; "
                         + "clear it with `mosquitto_pub -r -n -t \(m.topic)`)")
            return
        }
        switch MQTTCommands.request(m.payload) {
        case .failure(let refusal):
            s.said.badInput.say(log, "MQTT: refused a command (\(m.payload.count) bytes): \(refusal.reply.error ?? "")")
            answer(m, refusal.reply, &s)
        case .success(let (request, line)):
            log.info("MQTT: command \(request.name)")
            link.ask(request, line: line, Reply { [weak self] reply in
                guard let self else { return }
                self.queue.async { self.state.withLock { self.answer(m, reply, &$0) } }
            })
        }
    }

    /// The socket's JSON reply, to the MQTT 5 response topic when the command named one
    /// and a reply may go there (MQTTSettings.mayReply).
    private func answer(_ m: MQTTIncoming, _ reply: ControlReply, _ s: inout State) {
        guard let topic = m.responseTopic, s.connected else { return }
        guard settings.mayReply(to: topic) else {
            s.said.badInput.say(log, "MQTT: no reply sent to the response topic \"\(topic.prefix(200))\": replies go "
                              + "outside \(settings.topic)/ (or under \(settings.topic)/reply/) and outside "
                              + "\(settings.discoveryPrefix)/")
            return
        }
        s.client?.publish(topic, ControlCoding.encode(reply), qos: 1, retain: false, correlation: m.correlation)
    }
}

/// A log line at most once per `interval` seconds, with how many were held back.
/// The session's rate-limited warnings, one per kind of trouble.
struct Said {
    /// The broker unreachable or refusing: once in 5 minutes.
    var problems = RateLimitedLog(interval: 300)
    var badInput = RateLimitedLog(interval: 60)
    var retainedCommands = RateLimitedLog(interval: 60)
    var dropLog = RateLimitedLog(interval: 60)
}

struct RateLimitedLog {
    let interval: TimeInterval
    private var last: Date?
    private var held = 0
    private var total = 0

    init(interval: TimeInterval) { self.interval = interval }

    /// The line logged; nil when held back.
    @discardableResult
    mutating func say(_ log: Log, _ message: @autoclosure () -> String) -> String? {
        total += 1
        let now = Date()
        if let l = last, now.timeIntervalSince(l) < interval {
            held += 1
            return nil
        }
        let text = message()
        log.warning(text + (held > 0 ? " (\(held) more like it not logged)" : ""))
        last = now
        held = 0
        return text
    }

    /// The problem is over: how many times it happened (nil if it never did).
    mutating func reset() -> Int? {
        defer { last = nil; held = 0; total = 0 }
        return total > 0 ? total : nil
    }
}
