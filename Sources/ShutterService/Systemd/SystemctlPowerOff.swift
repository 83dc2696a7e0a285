// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore

/// Powers off through logind: `systemctl --no-ask-password poweroff`, run as the
/// service user. logind asks polkit for `org.freedesktop.login1.power-off` (or
/// `...-multiple-sessions` when someone is logged in); deploy/polkit/
/// 50-shutter-poweroff.rules grants exactly those two to the user `shutter`.
/// Inhibitors are respected (no `-ignore-inhibit`). Never runs as root: a root
/// process refuses (`runningAsRoot`), so a developer's `sudo shutterd --board sim`
/// cannot switch their machine off.
public struct SystemctlPowerOff: PowerOff {
    let command: [String]
    let environment: [String]
    let refuseRoot: Bool

    public init() {
        let candidates: [String] = ["/usr/bin/systemctl", "/bin/systemctl"]
        let systemctl: String = candidates.first { access($0, X_OK) == 0 } ?? candidates[0]
        self.init(command: [systemctl, "--no-ask-password", "poweroff"],
                  // SYSTEMD_OFFLINE=0: with ProtectProc=invisible /proc/1 is hidden, so
                  // systemctl must not guess it runs in a chroot and do nothing.
                  environment: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "SYSTEMD_OFFLINE=0"],
                  refuseRoot: true)
    }

    /// Tests run a harmless command in place of systemctl (and as root).
    init(command: [String], environment: [String], refuseRoot: Bool) {
        self.command = command
        self.environment = environment
        self.refuseRoot = refuseRoot
    }

    public func powerOff() async throws(PowerOffError) {
        if refuseRoot && geteuid() == 0 {
            throw PowerOffError(.runningAsRoot, "shutterd runs as root and will not power the machine off; "
                                    + "run it as the service user (deploy/shutterd.service, User=shutter)")
        }
        // sync, spawn and waitpid block: a thread of their own, off the task pool.
        let result: Result<Void, PowerOffError> = await withCheckedContinuation { continuation in
            PlainThread.start(name: "shutter.poweroff") { continuation.resume(returning: run()) }
        }
        if case .failure(let error) = result { throw error }
    }

    /// Syncs, runs the command, returns its verdict (what it printed in the message).
    func run() -> Result<Void, PowerOffError> {
        // The files are finalised by now; flush every file system before asking.
        sync()
        let outcome: ChildProcess.Outcome
        do {
            outcome = try ChildProcess().run(command, environment: environment, background: false, limit: 65536)
        } catch {
            return .failure(PowerOffError(.spawnFailed, error.description))
        }
        if outcome.succeeded { return .success(()) }
        let how = outcome.signal.map { "signal \($0)" } ?? "exit status \(outcome.status ?? -1)"
        let said = (outcome.stderr + String(decoding: outcome.stdout, as: UTF8.self)).trimmedWhitespace
        return .failure(PowerOffError(.refused, "\(command.joined(separator: " ")) failed (\(how)"
                                        + (said.isEmpty ? "" : ": \(said)") + "); check that deploy/install.sh installed "
                                        + "/etc/polkit-1/rules.d/50-shutter-poweroff.rules and that polkitd runs"))
    }
}
