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
import Synchronization

/// MQTT as a part of the service (when `mqtt.enabled`): the session starts with the
/// service and watches its live events; `run` publishes the status every minute and
/// when something changed; `stop` says `offline` and disconnects.
final class MQTTPart: ServicePart {
    private let config: ShutterConfig
    private let session = Mutex<MQTTSession?>(nil)
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let watch = Mutex<Int?>(nil)
    private let timer = Mutex<(any DispatchSourceTimer)?>(nil)
    static let statusSeconds = 60

    init(config: ShutterConfig) {
        self.config = config
        // Wakes coalesce: one status request at a time, the latest figures.
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    var name: String { "MQTT" }

    func start(_ service: CameraService) -> PartStart {
        start(link: ServiceLink(service: service), board: service.ctx.roles.name)
    }

    /// In shutterd (`ServiceLink`) or in the connector (`ControlSocketLink`). `board`: the
    /// board's name, the device's model unless `board.description` says one.
    func start(link: any CameraLink, board name: String) -> PartStart {
        guard config.mqtt.enabled else { return .off }
        let board = config.board.description.isEmpty ? name : config.board.description
        let settings: MQTTSettings
        do {
            settings = try MQTTSettings(config: config, board: board)
        } catch {
            return .failed("\(error)")
        }
        let s = MQTTSession(settings: settings, link: link, statusWake: wake)
        session.withLock { $0 = s }
        s.start()
        watch.withLock {
            $0 = link.watch { [weak s] e in
                // shutterctl mqtt forget, asked of a shutterd whose MQTT runs in the connector.
                if e.type == Self.forgetEvent {
                    s?.forget { connected in
                        Log("shutter.mqtt").notice(connected ? "MQTT: Home Assistant's discovery configs cleared (shutterctl mqtt forget)"
                                                   : "MQTT: Home Assistant's discovery configs are cleared once the broker is back (shutterctl mqtt forget)")
                    }
                } else {
                    s?.live(e)
                }
            }
        }
        timer.withLock { $0 = s.statusTimer(seconds: Self.statusSeconds) }
        wake.yield()
        return .running
    }

    func run(_ service: CameraService) async { await run() }

    /// Publishes the status at each wake, until cancelled.
    func run() async {
        guard let s = session.withLock({ $0 }) else { return }  // not started: the policy retries the start
        for await _ in wakes {
            if let status = await s.link.status() { s.status(status) }
        }
    }

    /// The live event by which a shutterd started with `--no-connector` passes
    /// `shutterctl mqtt forget` on to the connector, which follows its events.
    static let forgetEvent = "mqtt-forget"

    /// `shutterctl mqtt forget` (the control socket's, not the loop's: it concerns no capture).
    static func forget(part: MQTTPart?, reply: Reply) {
        guard let s = part?.session.withLock({ $0 }) else {
            return reply.send(.failure("MQTT is off (mqtt.enabled is false): nothing to forget"))
        }
        s.forget { connected in
            var r = ControlReply(ok: true)
            r.note = connected ? "Home Assistant's discovery configs cleared (until the next start with mqtt.discovery)"
                : "not connected to the broker now: the configs are cleared as soon as it is back"
            reply.send(r)
        }
    }

    func stop() {
        timer.withLock { $0?.cancel(); $0 = nil }
        guard let s = session.withLock({ $0 }) else { return }
        if let id = watch.withLock({ $0 }) { s.link.stopWatching(id) }
        s.stop()
    }
}
