// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The listening sockets systemd passed to this process (sd_listen_fds(3) by hand, with
/// their names): how a part that listens works while shutterd itself has no network
/// (`PrivateNetwork=yes`): PID 1 binds the socket in the host's network and hands it over.
/// Read once, at the first call; the variables are then unset so no child inherits them.
/// Each socket has one owner: the part that `take`s it by name (shutterd.socket's for the
/// web page, `FileDescriptorName=rtsp` for the live RTSP stream).
public enum SystemdSockets {
    private static let passed = Mutex<[(name: String, fd: Int32)]?>(nil)

    /// The passed socket with one of `names` (the first socket whatever its name when
    /// systemd named none), nil when there is none. It stays open for the process's life:
    /// give a library that closes its socket at its stop a `copy`, so a part that starts
    /// again listens on it anew.
    public static func socket(named names: [String]) -> Int32? {
        passed.withLock { p in
            if p == nil { p = read() }
            return p!.first { names.contains($0.name) }?.fd
        }
    }

    /// A close-on-exec copy of `fd` the caller owns; nil when the process is out of descriptors.
    public static func copy(_ fd: Int32) -> Int32? {
        let c = fcntl(fd, F_DUPFD_CLOEXEC, 3)
        return c >= 0 ? c : nil
    }

    private static func read() -> [(name: String, fd: Int32)] {
        defer { unsetenv("LISTEN_PID"); unsetenv("LISTEN_FDS"); unsetenv("LISTEN_FDNAMES") }
        guard let pid = getenv("LISTEN_PID").flatMap({ Int32(String(cString: $0)) }), pid == getpid(),
              // Bounded before any arithmetic (systemd passes a few; a stray value must not trap).
              let count = getenv("LISTEN_FDS").flatMap({ Int(String(cString: $0)) }), (1...256).contains(count) else { return [] }
        let names = getenv("LISTEN_FDNAMES").map { String(cString: $0).split(separator: ":", omittingEmptySubsequences: false).map(String.init) } ?? []
        return (0..<count).map { i in
            let fd = Int32(3 + i)  // SD_LISTEN_FDS_START
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
            // Unnamed (no LISTEN_FDNAMES): "unknown", as sd_listen_fds_with_names(3) says.
            return (i < names.count && !names[i].isEmpty ? names[i] : "unknown", fd)
        }
    }
}
