import Dispatch
import Foundation
import ShutterCore

/// Starts the service with its control socket, signals and (on a terminal) the
/// keyboard button, and returns the exit code when it stops.
enum ServiceRunner {
    static func run(config: ShutterConfig, roles: BoardRoles, hooks: ServiceHooks? = nil) async -> Int32 {
        let log = Log("shutter.main")
        let service = CameraService(config: config, roles: roles, hooks: hooks ?? SystemdHooks.make())
        var server: ControlServer?
        do {
            server = try ControlServer(path: config.control.socketPath) { request in
                await service.handle(request)
            }
            log.notice("control socket \(config.control.socketPath)")
        } catch {
            log.error("control socket unavailable (\(error)); shutterctl will not reach this service. Check control.socketPath or --control-socket.")
        }
        let signals = SignalHandlers(service: service)
        var terminal: TerminalButton?
        if roles.sim != nil, isatty(0) == 1 {
            terminal = TerminalButton(service: service)
        } else if roles.sim != nil {
            log.notice("simulated board: drive it with `shutterctl --socket \(config.control.socketPath) tap` (or `hold 3`), or SIGUSR1 for a photo")
        }
        let code = await service.run()
        terminal?.restore()
        server?.close()
        withExtendedLifetime(signals) {}
        return code
    }
}

/// SIGUSR1 → photo, SIGUSR2 → start/stop recording, SIGTERM/SIGINT → finish and exit.
/// Dispatch signal sources on a serial queue hand each signal to the service actor.
final class SignalHandlers {
    private let sources: [any DispatchSourceSignal]

    init(service: CameraService) {
        let queue = DispatchQueue(label: "shutter.signals")
        var sources: [any DispatchSourceSignal] = []
        let table: [(Int32, @Sendable () -> Void)] = [
            (SIGUSR1, { Task { await service.command(.photo) } }),
            (SIGUSR2, { Task { await service.toggleRecording() } }),
            (SIGTERM, { Task { await service.stop() } }),
            (SIGINT, { Task { await service.stop() } }),
        ]
        for (sig, action) in table {
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            s.setEventHandler(handler: action)
            s.resume()
            sources.append(s)
        }
        signal(SIGPIPE, SIG_IGN)
        self.sources = sources
    }
}
