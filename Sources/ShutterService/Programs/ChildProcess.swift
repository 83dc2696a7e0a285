// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import CShutterSys
import Synchronization

/// Runs a program to its end and keeps what it printed (rclone for the uploads, systemctl for
/// the power-off). Blocking: call it where a blocking call runs (a job queue or a thread),
/// never on the loop. Its children get the lowest CPU and I/O priority when `background` is set, so they never
/// take a frame's time. `stop()` from another thread ends a run early (SIGTERM, then
/// SIGKILL after `grace`).
public final class ChildProcess: Sendable {
    public struct Outcome: Sendable {
        /// The exit status, or nil when a signal ended it (`signal`).
        public var status: Int32?
        public var signal: Int32?
        public var stdout: [UInt8]
        public var stderr: String
        public var succeeded: Bool { status == 0 }
    }

    public struct SpawnError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    private let running = Mutex<pid_t>(0)
    private let stopped = Atomic<Bool>(false)

    public init() {}

    /// Runs `argv` (argv[0] a path) with `environment`; stdout kept up to `limit` bytes,
    /// stderr's last 8 KB.
    /// `line`: told each line of stderr as it comes (a progress line).
    public func run(_ argv: [String], environment: [String], background: Bool = true,
                    limit: Int = 16 << 20, line: ((String) -> Void)? = nil) throws(SpawnError) -> Outcome {
        if stopped.load(ordering: .acquiring) { throw SpawnError(description: "stopped") }
        var out: [Int32] = [-1, -1], err: [Int32] = [-1, -1]
        // Socket pairs: they take SOCK_CLOEXEC atomically (no other spawn inherits an end).
        let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, kind, 0, &out) == 0 else {
            throw SpawnError(description: "socketpair: \(String(cString: strerror(errno)))")
        }
        guard socketpair(AF_UNIX, kind, 0, &err) == 0 else {
            close(out[0]); close(out[1])
            throw SpawnError(description: "socketpair: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, out[1], 1)
        posix_spawn_file_actions_adddup2(&actions, err[1], 2)
        // The child starts with the default signal actions and none blocked: the service
        // ignores SIGTERM, SIGINT and SIGHUP for its own handlers, which a child would inherit
        // (and then not end at `stop()`'s SIGTERM).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t(), none = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGUSR1, SIGUSR2] { sigaddset(&defaults, s) }
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        // `stopped` is looked at under the same lock `stop()` takes: no child starts after a stop.
        let spawned = running.withLock { current -> Int32 in
            if stopped.load(ordering: .acquiring) { return ECANCELED }
            let r = Self.withCStrings(argv) { a in Self.withCStrings(environment) { e in
                posix_spawn(&pid, argv[0], &actions, &attributes, a, e)
            } }
            if r == 0 { current = pid }
            return r
        }
        close(out[1]); close(err[1])
        guard spawned == 0 else {
            close(out[0]); close(err[0])
            if spawned == ECANCELED { throw SpawnError(description: "stopped") }
            throw SpawnError(description: "cannot run \(argv[0]): \(String(cString: strerror(spawned)))")
        }
        if background {
            // Lowest CPU priority and the idle I/O class; a refusal (a sandbox without the calls) leaves it at ours.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(pid), 19)
            _ = shutter_ioprio_idle(pid)
        }
        var stdout: [UInt8] = [], stderr: [UInt8] = []
        Self.drain(out[0], err[0], limit: limit, into: &stdout, &stderr, line: line)
        close(out[0]); close(err[0])
        // Waited for without reaping, forgotten under the lock, then reaped: `stop()` never
        // signals a pid the kernel may have given to another process.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
        running.withLock { $0 = 0 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let signal = status & 0x7f
        return Outcome(status: signal == 0 ? (status >> 8) & 0xff : nil, signal: signal == 0 ? nil : signal,
                       stdout: stdout, stderr: String(decoding: stderr.suffix(8192), as: UTF8.self))
    }

    /// Ends the run under way (and refuses later ones until `resume`): SIGTERM, SIGKILL after `grace`.
    public func stop(grace: Duration = .seconds(2)) {
        stopped.store(true, ordering: .releasing)
        signalRunning(SIGTERM)
        let ms = grace.components.seconds * 1000 + grace.components.attoseconds / 1_000_000_000_000_000
        var waited: Int64 = 0
        while waited < ms, running.withLock({ $0 }) != 0 {
            usleep(20_000)
            waited += 20
        }
        signalRunning(SIGKILL)
    }

    /// Allows runs again after `stop`.
    public func resume() { stopped.store(false, ordering: .releasing) }

    private func signalRunning(_ sig: Int32) {
        running.withLock { pid in if pid > 0 { kill(pid, sig) } }
    }

    private static func drain(_ a: Int32, _ b: Int32, limit: Int, into outA: inout [UInt8], _ outB: inout [UInt8],
                              line: ((String) -> Void)?) {
        var pending: [UInt8] = []
        var fds = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
        var open = 2
        var buffer = [UInt8](repeating: 0, count: 65536)
        while open > 0 {
            if poll(&fds, 2, -1) < 0 {
                if errno == EINTR { continue }
                return
            }
            for i in 0..<2 where fds[i].fd >= 0 && fds[i].revents != 0 {
                let n = buffer.withUnsafeMutableBytes { read(fds[i].fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    if i == 0 {
                        if outA.count < limit { outA += buffer[0..<min(n, limit - outA.count)] }
                    } else {
                        if let line {
                            pending += buffer[0..<n]
                            while let nl = pending.firstIndex(of: 0x0A) {
                                line(String(decoding: pending[..<nl], as: UTF8.self))
                                pending.removeSubrange(...nl)
                            }
                            if pending.count > 8192 { pending.removeAll() }
                        }
                        outB += buffer[0..<n]
                        if outB.count > 65536 { outB.removeFirst(outB.count - 16384) }
                    }
                } else if n == 0 || errno != EINTR {
                    fds[i].fd = -1
                    open -= 1
                }
            }
        }
    }

    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return body(pointers)
    }
}
