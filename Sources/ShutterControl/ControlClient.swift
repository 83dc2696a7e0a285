// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
#if canImport(Glibc)
import Glibc
#endif

/// Sends one request to the control socket and waits for its reply (or, for
/// `events`, reads its lines as they come).
public enum ControlClient {
    public enum Failure: Error, CustomStringConvertible {
        case cannotConnect(path: String, errno: Int32)
        case noReply(path: String)
        case badReply(String)

        public var description: String {
            switch self {
            case let .cannotConnect(path, e):
                let why = String(cString: strerror(e))
                return "cannot reach shutterd at \(path): \(why). Is shutterd running? (start it with `make run`, or give --socket PATH)"
            case let .noReply(path):
                return "shutterd at \(path) closed the connection without a reply"
            case let .badReply(text):
                return "shutterd sent a reply that is not JSON: \(text.prefix(200))"
            }
        }
    }

    /// `timeout`: how long to wait for the reply (a hold waits for its clip).
    public static func send(_ request: ControlRequest, to path: String, timeout: Duration = .seconds(120)) throws -> (ControlReply, [UInt8]) {
        try send(line: ControlCoding.line(request), to: path, timeout: timeout)
    }

    /// A request line as it came (a client's own JSON, newline-terminated), its reply.
    public static func send(line payload: [UInt8], to path: String, timeout: Duration = .seconds(120)) throws -> (ControlReply, [UInt8]) {
        let fd = try connect(to: path)
        defer { close(fd) }
        var tv = timeval(tv_sec: Int(timeout.milliseconds / 1000), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        _ = payload.withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
        var data: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n < 0 { if errno == EINTR { continue }; break }
            if n == 0 { break }
            data.append(contentsOf: buf[0..<n])
            if buf[0..<n].contains(0x0A) { break }
        }
        guard !data.isEmpty else { throw Failure.noReply(path: path) }
        do {
            return (try PlainJSON.decode(ControlReply.self, from: data), data)
        } catch {
            throw Failure.badReply(String(decoding: data, as: UTF8.self))
        }
    }

    /// A request whose answer is a stream of lines (`events`): `line` gets each one
    /// (without its newline) until it returns false or shutterd closes the connection.
    public static func stream(_ request: ControlRequest, to path: String, line: ([UInt8]) -> Bool) throws {
        let fd = try connect(to: path)
        defer { close(fd) }
        let payload = ControlCoding.line(request)
        _ = payload.withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
        var pending: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        var any = false
        while true {
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n < 0 { if errno == EINTR { continue }; break }
            if n == 0 { break }
            pending.append(contentsOf: buf[0..<n])
            while let nl = pending.firstIndex(of: 0x0A) {
                any = true
                let text = Array(pending[..<nl])
                pending = Array(pending[(nl + 1)...])
                if !line(text) { return }
            }
        }
        if !any { throw Failure.noReply(path: path) }
    }

    /// A request that takes long (`timelapse`) with the live events watched meanwhile: the
    /// events connection first (its first line, the state, says it is watched), then the
    /// request; `event` gets each event line until the reply comes (no timeout: the request
    /// waits for its work, and shutterd answers it however that ends).
    public static func send(_ request: ControlRequest, to path: String,
                            watching event: ([UInt8]) -> Void) throws -> (ControlReply, [UInt8]) {
        let events = try connect(to: path)
        defer { close(events) }
        let hello = ControlCoding.line(ControlRequest(cmd: "events"))
        _ = hello.withUnsafeBytes { Glibc.send(events, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
        var eventBytes: [UInt8] = []
        // Watched once the first line (the state) is in.
        while !eventBytes.contains(0x0A) {
            guard let chunk = receive(events), !chunk.isEmpty else { throw Failure.noReply(path: path) }
            eventBytes += chunk
        }
        eventBytes = Array(eventBytes[(eventBytes.firstIndex(of: 0x0A)! + 1)...])
        let fd = try connect(to: path)
        defer { close(fd) }
        let payload = ControlCoding.line(request)
        _ = payload.withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
        var reply: [UInt8] = []
        var watching = true
        while !reply.contains(0x0A) {
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: watching ? events : -1, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 2, -1) < 0 { if errno == EINTR { continue }; break }
            if fds[1].revents != 0 {
                if let chunk = receive(events), !chunk.isEmpty {
                    eventBytes += chunk
                    while let nl = eventBytes.firstIndex(of: 0x0A) {
                        event(Array(eventBytes[..<nl]))
                        eventBytes.removeSubrange(...nl)
                    }
                } else {
                    watching = false  // shutterd closed the events: the reply still comes
                }
            }
            if fds[0].revents != 0 {
                guard let chunk = receive(fd), !chunk.isEmpty else { break }
                reply += chunk
            }
        }
        guard !reply.isEmpty else { throw Failure.noReply(path: path) }
        do {
            return (try PlainJSON.decode(ControlReply.self, from: reply), reply)
        } catch {
            throw Failure.badReply(String(decoding: reply, as: UTF8.self))
        }
    }

    /// What one recv(2) gives; [] at the end, nil on an error.
    private static func receive(_ fd: Int32) -> [UInt8]? {
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n < 0 { if errno == EINTR { continue }; return nil }
            return Array(buf[0..<n])
        }
    }

    private static func connect(to path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure.cannotConnect(path: path, errno: errno) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        guard path.utf8.count < MemoryLayout.size(ofValue: addr.sun_path) else {
            close(fd)
            throw Failure.cannotConnect(path: path, errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            path.utf8.enumerated().forEach { raw[$0.offset] = $0.element }
        }
        let len = socklen_t(MemoryLayout<sa_family_t>.size + path.utf8.count + 1)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, len) }
        }
        guard rc == 0 else {
            let e = errno
            close(fd)
            throw Failure.cannotConnect(path: path, errno: e)
        }
        return fd
    }
}
