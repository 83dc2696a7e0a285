// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterBuild
import ShutterCore

/// The service's hooks: systemd's notify socket and logind power-off when
/// started by systemd ($NOTIFY_SOCKET), else log lines (a terminal, a test).
enum SystemdHooks {
    static func make() -> ServiceHooks {
        let log = Log("shutter.systemd")
        do throws(SystemdNotifyError) {
            if let notifier = try SystemdNotifier.fromEnvironment() {
                let hooks = ServiceHooks.systemd(notifier: notifier, powerOff: SystemctlPowerOff(), log: log)
                // `systemctl status` names the version from the start, before the camera is up.
                hooks.status("Shutter \(ShutterVersion.string) starting")
                return hooks
            }
        } catch {
            log.warning("NOTIFY_SOCKET is set but unusable (\(error)); systemd will not hear READY or watchdog pings")
        }
        return ServiceHooks(
            ready: { line in log.debug("READY: \(line)") },
            status: { line in log.debug("STATUS: \(line)") },
            watchdogPing: {},
            stopping: {},
            powerOff: { log.notice("power off requested, but shutterd is not running under systemd: not powering off") },
            exitWithoutWaiting: { exit($0) })
    }
}
