import Foundation
import ShutterCore

/// The service's hooks to systemd when started by it ($NOTIFY_SOCKET), else logs.
enum SystemdHooks {
    static func make() -> ServiceHooks {
        let log = Log("shutter.systemd")
        return ServiceHooks(
            ready: { line in log.info("READY: \(line)") },
            status: { line in log.info("STATUS: \(line)") },
            watchdogPing: {},
            stopping: {},
            powerOff: { log.notice("power off requested (no power-off mechanism configured)") })
    }
}
