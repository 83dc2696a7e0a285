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

    /// Syncs, runs the command, returns its verdict (stderr in the message).
    func run() -> Result<Void, PowerOffError> {
        // The files are finalised by now; flush every file system before asking.
        sync()
        // The child's stdout+stderr, for the error message. A socketpair because it
        // takes SOCK_CLOEXEC atomically (no other spawn inherits the write end).
        var pipeFDs: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pipeFDs) == 0 else {
            return .failure(PowerOffError(.spawnFailed, "socketpair: \(String(cString: strerror(errno)))"))
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 2)

        var pid: pid_t = 0
        let spawnResult = withCStrings(command) { argv in
            withCStrings(environment) { envp in
                posix_spawn(&pid, command[0], &actions, nil, argv, envp)
            }
        }
        close(pipeFDs[1])
        guard spawnResult == 0 else {
            close(pipeFDs[0])
            return .failure(PowerOffError(.spawnFailed, "cannot run \(command[0]): \(String(cString: strerror(spawnResult)))"))
        }
        let output = readAll(pipeFDs[0])
        close(pipeFDs[0])

        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else {
                return .failure(PowerOffError(.spawnFailed, "waitpid: \(String(cString: strerror(errno)))"))
            }
        }
        // WIFEXITED / WEXITSTATUS are macros Swift cannot import.
        let signal = status & 0x7f
        let exitCode = (status >> 8) & 0xff
        if signal == 0 && exitCode == 0 { return .success(()) }
        let how = signal == 0 ? "exit status \(exitCode)" : "signal \(signal)"
        let said = output.trimmedWhitespace
        return .failure(PowerOffError(.refused, "\(command.joined(separator: " ")) failed (\(how)"
                                        + (said.isEmpty ? "" : ": \(said)") + "); check that deploy/install.sh installed "
                                        + "/etc/polkit-1/rules.d/50-shutter-poweroff.rules and that polkitd runs"))
    }

    private func readAll(_ fd: Int32) -> String {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 { data += buffer[0..<n]; if data.count > 65536 { break } }
            else if n < 0 && errno == EINTR { continue }
            else { break }
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A NULL-terminated `char *[]` for posix_spawn, valid during `body`.
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { pointers.forEach { free($0) } }
    return body(pointers)
}
