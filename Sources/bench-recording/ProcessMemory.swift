// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Resident memory of this process from /proc/self/status, in bytes.
enum ProcessMemory {
    static func field(_ name: String, pid: String = "self") -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            let kb = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
            return (kb ?? 0) * 1024
        }
        return 0
    }

    static var resident: Int { field("VmRSS") }
    static var peak: Int { field("VmHWM") }
    /// Resets VmHWM to the current RSS (Linux ≥ 4.0), so a later peak is this phase's.
    static func resetPeak() {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        if fd >= 0 { _ = write(fd, "5", 1); close(fd) }
    }
}

/// A child process fed through its stdin. Its peak RSS is sampled from its own
/// /proc/PID/status VmHWM (wait4's ru_maxrss is useless here: a child started with
/// posix_spawn's vfork inherits this process's high-water mark at exec).
struct ChildProcess {
    let pid: pid_t
    let stdin: Int32

    static func spawn(_ argv: [String]) throws -> ChildProcess {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw POSIXError(.EPIPE) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[0], 0)
        posix_spawn_file_actions_addclose(&actions, fds[1])
        posix_spawn_file_actions_addclose(&actions, fds[0])
        var cargs = argv.map { strdup($0) } + [nil]
        defer { cargs.forEach { free($0) } }
        var pid: pid_t = 0
        let r = posix_spawnp(&pid, argv[0], &actions, nil, &cargs, environ)
        close(fds[0])
        guard r == 0 else { close(fds[1]); throw POSIXError(POSIXErrorCode(rawValue: r) ?? .ENOENT) }
        return ChildProcess(pid: pid, stdin: fds[1])
    }

    /// The child's own peak RSS so far, in bytes (0 once it has exited).
    var peakRSS: Int { ProcessMemory.field("VmHWM", pid: String(pid)) }

    /// Exit status and peak RSS in bytes, sampling VmHWM until the child exits
    /// (the high-water mark only grows, so the last sample is the peak).
    func wait() -> (status: Int32, peakRSS: Int) {
        var status: Int32 = 0
        var peak = 0
        while true {
            peak = max(peak, peakRSS)
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR { break }
            usleep(5_000)
        }
        return (status, peak)
    }
}
