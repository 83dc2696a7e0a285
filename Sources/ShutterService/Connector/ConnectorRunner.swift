// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterStorage

/// `shutterd --connector`: the parts that connect out of the camera (MQTT today), in a
/// process of their own. shutterd.service keeps shutterd off the network
/// (`PrivateNetwork=yes`, so its sandbox stays as tight for those who enable nothing);
/// shutterd-connector.service may reach the network, holds no device and reads the card
/// without writing it, and reaches the camera only through shutterd's control socket
/// (`ControlSocketLink`), as shutterctl does. With nothing enabled it ends at once.
enum ConnectorRunner {
    static func run(config: ShutterConfig) async -> Int32 {
        let log = Log("shutter.connector")
        guard config.mqtt.enabled else {
            log.notice("nothing to connect: mqtt.enabled is false (the connector runs what connects out of the camera: "
                       + "MQTT); it ends")
            return 0
        }
        let link = ControlSocketLink(socketPath: config.control.socketPath, storage: Storage(config: config))
        let mqtt = MQTTPart(config: config)
        switch mqtt.start(link: link, board: config.board.name) {
        case .off:
            return 0
        case .failed(let why):
            log.error("MQTT not started: \(why)")
            return ConfigError.exitCode
        case .running:
            break
        }
        log.notice("connector: MQTT for the camera on \(config.control.socketPath)")
        let signals = SignalHandlers()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await mqtt.run() }
            for await s in signals.stream where s == .stop { break }
            group.cancelAll()
        }
        mqtt.stop()  // `offline`, then the disconnect
        link.close()
        withExtendedLifetime(signals) {}
        log.notice("connector stopped")
        return 0
    }
}
