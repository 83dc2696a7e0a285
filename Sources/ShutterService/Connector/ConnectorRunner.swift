// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterStorage

/// `shutterd --connector`: the parts that connect out of the camera (MQTT, uploads), in a
/// process of their own. shutterd.service keeps shutterd off the network
/// (`PrivateNetwork=yes`, so its sandbox stays as tight for those who enable nothing);
/// shutterd-connector.service may reach the network, holds no device and reads the card
/// without writing it, and reaches the camera only through shutterd's control socket
/// (`ControlSocketLink`), as shutterctl does. With nothing enabled it ends at once.
enum ConnectorRunner {
    static func run(config: ShutterConfig) async -> Int32 {
        let log = Log("shutter.connector")
        guard config.mqtt.enabled || config.upload.enabled || config.webhook.enabled else {
            log.notice("nothing to connect: mqtt.enabled, upload.enabled and webhook.enabled are false (the connector runs "
                       + "what connects out of the camera: MQTT, uploads, the webhook); it ends")
            return 0
        }
        let storage = Storage(config: config)
        let link = ControlSocketLink(socketPath: config.control.socketPath, storage: storage)
        let mqtt = config.mqtt.enabled ? MQTTPart(config: config) : nil
        if let mqtt {
            switch mqtt.start(link: link, board: config.board.name) {
            case .off: break
            case .failed(let why):
                log.error("MQTT not started: \(why)")
                return ConfigError.exitCode
            case .running: break
            }
        }
        let uploads = config.upload.enabled ? UploadPart(config: config) : nil
        if let uploads, case .failed(let why) = uploads.start(link: link, storage: storage) {
            // What to fix is said (and in shutterd's status.lastError); restarting would only repeat it.
            log.error("uploads not started: \(why)")
            mqtt?.stop()
            link.close()
            return ConfigError.exitCode
        }
        let webhook = config.webhook.enabled ? WebhookPart(config: config) : nil
        if let webhook, case .failed(let why) = webhook.start(link: link, storage: storage) {
            log.error("the webhook not started: \(why)")
            uploads?.stop()
            mqtt?.stop()
            link.close()
            return ConfigError.exitCode
        }
        let names = [mqtt.map { _ in "MQTT" }, uploads.map { _ in "uploads" }, webhook.map { _ in "the webhook" }]
        log.notice("connector: \(names.compactMap { $0 }.joined(separator: ", ")) "
                   + "for the camera on \(config.control.socketPath)")
        let signals = SignalHandlers()
        await withTaskGroup(of: Void.self) { group in
            if let mqtt { group.addTask { await mqtt.run() } }
            if let uploads { group.addTask { await uploads.run() } }
            if let webhook { group.addTask { await webhook.run() } }
            for await s in signals.stream where s == .stop { break }
            // The parts' own stops first (they end an rclone or curl under way), then the
            // tasks: a cycle waiting for a long copy would outlast TimeoutStopSec.
            webhook?.stop()
            uploads?.stop()
            group.cancelAll()
        }
        webhook?.stop()
        uploads?.stop()
        mqtt?.stop()  // `offline`, then the disconnect
        link.close()
        withExtendedLifetime(signals) {}
        log.notice("connector stopped")
        return 0
    }
}
