// SPDX-License-Identifier: BSD-2-Clause
import Dispatch
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterMedia
import ShutterStorage
import ShutterWeb

/// Starts the service with its parts — the control socket, the web page, the
/// keyboard button on a terminal — and the signals, and returns the exit code
/// when it stops. The parts start in that order and stop in reverse (CameraService.run).
enum ServiceRunner {
    /// `stallFinish`: `--debug-stall-finish` (a test's): every clip's finish stops at that
    /// step for ever, logged once it is there.
    /// `connectorElsewhere`: MQTT runs in `shutterd --connector` (shutterd-connector.service).
    static func run(config: ShutterConfig, roles: BoardRoles,
                    reloadConfig: (@Sendable () throws(ConfigError) -> ShutterConfig)? = nil,
                    stallFinish: RegularMP4.Step? = nil, connectorElsewhere: Bool = false) async -> Int32 {
        let log = Log("shutter.main")
        ProcessMemory.limitArenas(to: 2)
        let files = OpenFileLimit.raise()
        if files.after > files.before { log.info("open files: limit \(files.before) raised to \(files.after)") }
        let feed = PreviewFeed()
        // API tokens: managed on the control socket, checked by the web page and RTSP.
        let tokens = WebTokens(root: config.storage.root)
        if let refusal = RTSPPart.refusal(config, hasTokens: !tokens.list().isEmpty) {
            log.error("configuration: \(refusal)")
            return ConfigError.exitCode
        }
        let overlay: TextOverlay?
        do throws(OverlayError) {
            overlay = try OverlaySetup.make(config: config, clock: SystemClock(), wallClock: SystemWallClock())
        } catch {
            log.error("configuration: \(error)")
            return ConfigError.exitCode
        }
        let (live, livePage) = LiveSetup.make(config: config, overlay: overlay)
        var hooks = SystemdHooks.make()
        if let stallFinish {
            log.warning("debugging: every clip's finish stops \(stallFinish.rawValue) for ever (--debug-stall-finish)")
            hooks.finishReached = { step in
                guard step == stallFinish else { return }
                log.warning("debugging: a clip's finish stopped \(step.rawValue) (--debug-stall-finish)")
                while true { pause() }
            }
        }
        let service = CameraService(config: config, roles: roles, hooks: hooks,
                                    clock: SystemClock(), wallClock: SystemWallClock(), reloadConfig: reloadConfig,
                                    preview: PreviewFrames(feed: feed), live: live, overlay: overlay)
        let mqtt = connectorElsewhere ? nil : MQTTPart(config: config)
        if connectorElsewhere, config.mqtt.enabled { log.notice("MQTT runs in the connector (shutterd --connector)") }
        var parts: [any ServicePart] = [ControlSocketPart(path: config.control.socketPath, tokens: tokens, mqtt: mqtt,
                                                          connectorElsewhere: connectorElsewhere)]
        parts.append(WebPart(config: config, preview: feed, tokens: tokens, live: livePage?.feed))
        if let live, config.live.rtsp.enabled {
            parts.append(RTSPPart(config: config, live: live, accepts: LiveSetup.accepts(config: config, tokens: tokens)))
        } else if SystemdSockets.socket(named: ["rtsp"]) != nil {
            log.warning("systemd passed an RTSP socket (shutterd-rtsp.socket) but live.rtsp.enabled is false: viewers "
                        + "connect and get nothing; set live.rtsp.enabled, or `sudo systemctl disable --now shutterd-rtsp.socket`")
        }
        if let mqtt { parts.append(mqtt) }
        // The queues' folders on the card, made by their owner: the connector's unit may write only there.
        let queues: [(on: Bool, folder: String, what: String, part: any ServicePart)] = [
            (config.upload.enabled, UploadRecords.folder, "uploads", UploadPart(config: config)),
            (config.webhook.enabled, WebhookQueue.folder, "the webhook", WebhookPart(config: config)),
        ]
        for q in queues where q.on {
            let folder = RecordFolder<WebhookEvent>(root: config.storage.root, name: q.folder)
            do {
                try folder.prepare()
            } catch {
                log.error("\(q.what): cannot make \(folder.directory) (\(error)); its queue cannot be kept")
            }
            if connectorElsewhere {
                log.notice("\(q.what) run in the connector (shutterd --connector)")
            } else {
                parts.append(q.part)
            }
        }
        if roles.sim != nil, isatty(0) == 1 {
            parts.append(TerminalButton())
        } else if roles.sim != nil {
            log.notice("simulated board: drive it with `shutterctl --socket \(config.control.socketPath) tap` (or `hold 3`), or SIGUSR1 for a photo")
        }
        let signals = SignalHandlers()
        let code = await service.run(signals: signals.stream, parts: parts)
        withExtendedLifetime(signals) {}
        return code
    }
}

/// The control socket as a part of the service: bound at start, closed at stop.
final class ControlSocketPart: ServicePart {
    private let path: String
    private let server = Mutex<ControlServer?>(nil)
    private let tokens: WebTokens
    private let mqtt: MQTTPart?
    private let connectorElsewhere: Bool

    init(path: String, tokens: WebTokens, mqtt: MQTTPart? = nil, connectorElsewhere: Bool = false) {
        self.path = path
        self.tokens = tokens
        self.mqtt = mqtt
        self.connectorElsewhere = connectorElsewhere
    }

    var name: String { "the control socket" }

    func start(_ service: CameraService) -> PartStart {
        let log = Log("shutter.main")
        do {
            let s = try ControlServer(path: path, events: service.events) { [tokens, mqtt, connectorElsewhere] command, reply in
                switch command {
                case .webToken(let t): reply.send(WebTokenRequests.answer(t, tokens: tokens))
                case .mqttForget where connectorElsewhere:
                    // The connector follows these events: it clears the configs.
                    service.events.publish(LiveEvent(type: MQTTPart.forgetEvent, data: [:]))
                    var r = ControlReply(ok: true)
                    r.note = "passed to the connector (shutterd-connector.service), which clears Home Assistant's "
                        + "discovery configs when MQTT is on and it is running (its journal says so)"
                    reply.send(r)
                case .mqttForget: MQTTPart.forget(part: mqtt, reply: reply)
                default: service.post(.request(command, reply))
                }
            }
            server.withLock { $0 = s }
            log.notice("control socket \(path)")
            return .running
        } catch {
            return .failed("\(error); shutterctl cannot reach this service meanwhile. Check control.socketPath or --control-socket")
        }
    }

    func stop() { server.withLock { $0 }?.close() }
}

/// The web page as a part of the service (when `web.enabled`).
final class WebPart: ServicePart {
    private let config: ShutterConfig
    private let preview: PreviewFeed
    private let server = Mutex<WebServer?>(nil)
    private let tokens: WebTokens
    private let live: LiveVideoFeed?

    init(config: ShutterConfig, preview: PreviewFeed, tokens: WebTokens, live: LiveVideoFeed? = nil) {
        self.config = config
        self.preview = preview
        self.tokens = tokens
        self.live = live
    }

    var name: String { "the web page" }

    func start(_ service: CameraService) -> PartStart {
        switch WebFrontend.start(config: config, service: service, preview: preview, tokens: tokens, live: live) {
        case .success(let s):
            server.withLock { $0 = s }
            return s == nil ? .off : .running
        case .failure(let e):
            return .failed(e.message)
        }
    }

    func stop() {
        server.withLock { $0 }?.stop()
        tokens.flush()  // "last used", kept in memory (WebTokens.lastUsedWriteSeconds)
    }
}

/// SIGUSR1 → photo, SIGUSR2 → start/stop recording, SIGTERM/SIGINT → finish and exit,
/// SIGHUP → reread the configuration file.
/// Dispatch signal sources on one serial queue feed one stream, which the
/// service reads as events: signals are handled in the order they came.
final class SignalHandlers {
    let stream: AsyncStream<ServiceSignal>
    private let sources: [any DispatchSourceSignal]

    init() {
        let (stream, input) = AsyncStream.makeStream(of: ServiceSignal.self)
        self.stream = stream
        let queue = DispatchQueue(label: "shutter.signals")
        var sources: [any DispatchSourceSignal] = []
        let table: [(Int32, ServiceSignal)] = [
            (SIGUSR1, .photo), (SIGUSR2, .toggleRecording), (SIGTERM, .stop), (SIGINT, .stop), (SIGHUP, .reload),
        ]
        for (sig, meaning) in table {
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            s.setEventHandler { input.yield(meaning) }
            s.resume()
            sources.append(s)
        }
        signal(SIGPIPE, SIG_IGN)
        self.sources = sources
    }
}
