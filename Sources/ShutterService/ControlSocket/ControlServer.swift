// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import ShutterCore
import Synchronization
#if canImport(Glibc)
import Glibc
import ShutterStorage
#endif

/// The control socket: a Unix stream socket, mode 0660, one request line and one
/// reply line per connection — except `events`, answered with one JSON line per
/// live event until the client goes. Connections are rare (a CLI, a test, a
/// script on the Pi), so each gets a plain thread that may block.
/// A malformed request gets an error reply, never a crash.
public final class ControlServer: Sendable {
    /// Takes a decoded command and answers it through the `Reply` (once, from any thread).
    typealias Handler = @Sendable (ServiceCommand, Reply) -> Void

    public let path: String
    private let listenFD: Int32
    private let handler: Handler
    private let events: LiveEvents?
    private let closing = Mutex(false)
    private let log = Log("shutter.control")
    private static let maxRequestBytes = 64 * 1024

    init(path: String, events: LiveEvents? = nil, handler: @escaping Handler) throws {
        self.path = path
        self.handler = handler
        self.events = events
        let dir = PlainIO.deletingLastComponent(path)
        if !dir.isEmpty { try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        guard path.utf8.count < capacity else {
            throw SystemError(errno: ENAMETOOLONG, call: "bind", path: path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError(errno: errno, call: "socket") }
        // A stale socket from a crashed run would make bind fail: remove it, but
        // only if it is a socket (never delete a user's file by mistake).
        var st = stat()
        if lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFSOCK { unlink(path) }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            path.utf8.enumerated().forEach { raw[$0.offset] = $0.element }
        }
        let len = socklen_t(MemoryLayout<sa_family_t>.size + path.utf8.count + 1)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) }
        }
        guard rc == 0 else {
            let e = errno
            Glibc.close(fd)
            throw SystemError(errno: e, call: "bind", path: path)
        }
        chmod(path, 0o660)
        guard listen(fd, 16) == 0 else {
            let e = errno
            Glibc.close(fd)
            throw SystemError(errno: e, call: "listen", path: path)
        }
        listenFD = fd
        PlainThread.start(name: "control-accept") { [self] in acceptLoop() }
    }

    /// Stops accepting and removes the socket file.
    public func close() {
        closing.withLock { $0 = true }
        shutdown(listenFD, Int32(SHUT_RDWR))
        unlink(path)
    }

    /// Accepts until `close()`. Out of descriptors (EMFILE, ENFILE: the process or the system
    /// is at its limit, e.g. while network peers hold connections) it says so (at most once a
    /// minute), waits a little and tries again: the socket must answer once descriptors are
    /// free again.
    private func acceptLoop() {
        var failing = false, said = false
        var lastSaid: ContinuousClock.Instant?
        while true {
            let c = accept(listenFD, nil, nil)
            if c < 0 {
                let e = errno
                if e == EINTR || e == ECONNABORTED { continue }
                if closing.withLock({ $0 }) { return }
                let now = ContinuousClock.now
                if !failing, lastSaid.map({ now - $0 > .seconds(60) }) ?? true {
                    log.warning("control socket: cannot accept (\(SystemError(errno: e, call: "accept"))); "
                                + "trying again every 100 ms")
                    lastSaid = now
                    said = true
                }
                failing = true
                usleep(100_000)
                continue
            }
            if failing, said { log.notice("control socket: accepting again") }
            failing = false
            said = false
            _ = fcntl(c, F_SETFD, FD_CLOEXEC)
            PlainThread.start(name: "control-conn") { [self] in serve(c) }
        }
    }

    private func serve(_ fd: Int32) {
        defer { Glibc.close(fd) }
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let reply: ControlReply
        switch readLine(fd) {
        case .failure(let message):
            reply = .failure(message)
        case .success(let line):
            switch Self.check(line) {
            case .failure(let refusal):
                reply = refusal.reply
            case .success(.events):
                guard let events else { reply = .failure("this shutterd has no live events"); break }
                return streamEvents(events, to: fd)
            case .success(let command):
                reply = respond(to: command)
            }
        }
        _ = Self.sendAll(ControlCoding.encode(reply), to: fd)
    }

    private static func sendAll(_ data: Data, to fd: Int32) -> Bool {
        data.withUnsafeBytes { buf in
            var off = 0
            while off < buf.count {
                let n = send(fd, buf.baseAddress! + off, buf.count - off, Int32(MSG_NOSIGNAL))
                if n < 0 { if errno == EINTR { continue }; return false }
                off += n
            }
            return true
        }
    }

    /// `events`: one JSON line per live event (`{"event":"state","state":"ready",…}`),
    /// the current state first, until the client closes its end or shutterd stops.
    private func streamEvents(_ events: LiveEvents, to fd: Int32) {
        let queue = LineQueue()
        let id = events.watch { e in
            var o = e.data
            o["event"] = .string(e.type)
            queue.push(Data((JSONValue.object(o).rendered(pretty: false) + "\n").utf8))
        }
        defer { events.stopWatching(id) }
        while !closing.withLock({ $0 }) {
            for line in queue.take(waitingAtMost: 1) where !Self.sendAll(line, to: fd) { return }
            // The client sends nothing after its request: readable means it closed.
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, 0) == 1 { return }
        }
    }

    private func respond(to command: ServiceCommand) -> ControlReply {
        // This thread is ours to block until the loop answers.
        let answer = BlockingAnswer<ControlReply>()
        handler(command, Reply { answer.give($0) })
        return answer.wait() ?? .failure("internal error: no reply")
    }

    /// Lines for one `events` client: pushed by the loop (never waits), taken by
    /// the connection's thread. `ready` is signalled when the lines stop being empty;
    /// like the condition variable's spurious wake-up, a signal left from lines taken
    /// without waiting can end a later wait early, with nothing (the caller loops).
    private final class LineQueue: Sendable {
        private let lines = Mutex<[Data]>([])
        private let ready = DispatchSemaphore(value: 0)

        func push(_ line: Data) {
            let wasEmpty = lines.withLock { l -> Bool in
                defer { l.append(line) }
                return l.isEmpty
            }
            if wasEmpty { ready.signal() }
        }

        func take(waitingAtMost seconds: Double) -> [Data] {
            if lines.withLock({ $0.isEmpty }) {
                _ = ready.wait(timeout: .now() + seconds)
            } else {
                _ = ready.wait(timeout: .now())  // the signal of the lines taken now, if given yet
            }
            return lines.withLock { l in
                defer { l.removeAll() }
                return l
            }
        }
    }

    /// One request line, decoded into its command: the same for the web API's requests
    /// (WebFrontend) and MQTT's (MQTTCommands).
    static func check(_ line: Data) -> Result<ServiceCommand, ServiceCommand.Refusal> {
        let request: ControlRequest
        do {
            request = try JSONDecoder().decode(ControlRequest.self, from: line)
        } catch let refusal as RequestNumber.Refusal {
            return .failure(.init(refusal.message))
        } catch {
            Log("shutter.control").warning("malformed control request: \(String(decoding: line.prefix(200), as: UTF8.self))")
            return .failure(.init("malformed request: expected one JSON object per line like {\"cmd\":\"status\"}"))
        }
        return ServiceCommand.decode(request)
    }

    private enum LineResult { case success(Data), failure(String) }

    private func readLine(_ fd: Int32) -> LineResult {
        var data = Data()
        var buf = [UInt8](repeating: 0, count: 4096)
        while data.count < Self.maxRequestBytes {
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure("no request received (timed out)")
            }
            if n == 0 { break }
            if let nl = buf[0..<n].firstIndex(of: 0x0A) {
                data.append(contentsOf: buf[0..<nl])
                return .success(data)
            }
            data.append(contentsOf: buf[0..<n])
        }
        if data.count >= Self.maxRequestBytes { return .failure("request too long (max 64 KiB)") }
        if data.isEmpty { return .failure("empty request") }
        return .success(data)
    }
}
