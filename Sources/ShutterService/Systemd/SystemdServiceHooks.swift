// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

extension ServiceHooks {
    /// The service's hooks when systemd runs it: READY=1/STATUS=/WATCHDOG=1/STOPPING=1
    /// through `notifier`, power-off through `powerOff` (`SystemctlPowerOff()` in
    /// production). A failed notification or a refused power-off is logged, never fatal:
    /// a lost ping is covered by the next, a refused power-off leaves the camera up. Work
    /// that outlasts the stop's bound is not waited for: the process exits (systemd's
    /// stop timeout would kill it anyway).
    public static func systemd(notifier: SystemdNotifier, powerOff: any PowerOff,
                               log: Log = Log("shutter.systemd")) -> ServiceHooks {
        @Sendable func notify(_ what: String, _ send: () throws(SystemdNotifyError) -> Void) {
            do throws(SystemdNotifyError) {
                try send()
            } catch {
                log.warning("\(what): \(error.description)")
            }
        }
        return ServiceHooks(
            ready: { line in notify("READY=1") { () throws(SystemdNotifyError) in try notifier.ready(status: line) } },
            status: { line in notify("STATUS=") { () throws(SystemdNotifyError) in try notifier.status(line) } },
            watchdogPing: { notify("WATCHDOG=1") { () throws(SystemdNotifyError) in try notifier.watchdog() } },
            stopping: { notify("STOPPING=1") { () throws(SystemdNotifyError) in try notifier.stopping() } },
            powerOff: {
                log.notice("powering off")
                do throws(PowerOffError) {
                    try await powerOff.powerOff()
                } catch {
                    log.error(error.description)
                }
            },
            extendTimeout: { d in
                notify("EXTEND_TIMEOUT_USEC") { () throws(SystemdNotifyError) in
                    try notifier.extendTimeout(usec: UInt64(d.nanoseconds / 1000))
                }
            },
            exitWithoutWaiting: { exit($0) })
    }
}
