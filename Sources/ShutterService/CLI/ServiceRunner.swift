import Dispatch
import Foundation
import ShutterCore
import ShutterWeb

/// Starts the service with its control socket, signals and (on a terminal) the
/// keyboard button, and returns the exit code when it stops.
enum ServiceRunner {
    static func run(config: ShutterConfig, roles: BoardRoles, hooks: ServiceHooks? = nil,
                    reloadConfig: (@Sendable () throws(ConfigError) -> ShutterConfig)? = nil) async -> Int32 {
        let log = Log("shutter.main")
        let service = CameraService(config: config, roles: roles, hooks: hooks ?? SystemdHooks.make(),
                                    reloadConfig: reloadConfig)
        var server: ControlServer?
        do {
            server = try ControlServer(path: config.control.socketPath) { request in
                await service.handle(request)
            }
            log.notice("control socket \(config.control.socketPath)")
        } catch {
            log.error("control socket unavailable (\(error)); shutterctl will not reach this service. Check control.socketPath or --control-socket.")
        }
        let feed = PreviewFeed()
        if let tap = PreviewTap(feed: feed) { await service.attachPreview(tap) }
        let web = WebFrontend.start(config: config, service: service, preview: feed)
        let signals = SignalHandlers()
        var terminal: TerminalButton?
        if roles.sim != nil, isatty(0) == 1 {
            terminal = TerminalButton(service: service)
        } else if roles.sim != nil {
            log.notice("simulated board: drive it with `shutterctl --socket \(config.control.socketPath) tap` (or `hold 3`), or SIGUSR1 for a photo")
        }
        let code = await service.run(signals: signals.stream)
        terminal?.restore()
        server?.close()
        web?.stop()
        withExtendedLifetime(signals) {}
        return code
    }
}

/// SIGUSR1 → photo, SIGUSR2 → start/stop recording, SIGTERM/SIGINT → finish and exit,
/// SIGHUP → reread the configuration file.
/// Dispatch signal sources on one serial queue feed one stream, which the
/// service reads in its run loop: signals are handled in the order they came.
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
