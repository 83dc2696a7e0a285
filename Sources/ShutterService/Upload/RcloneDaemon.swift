// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import ShutterCore
import Synchronization

/// One long-lived `rclone rcd` for the uploads, asked over its remote-control API on
/// 127.0.0.1 (a random port, a password of its own in its environment, never on its command
/// line). Six rclone starts a batch, each with its SSH handshake or TLS session, cost 1-2 s
/// whatever the batch's size; one daemon keeps its connections and answers a list in
/// milliseconds. Started at the first call, at the lowest CPU and I/O priority, and again after
/// it ended. `pause()` stops its jobs and refuses new ones until `resume()`, and keeps it (and
/// its connections) ready; `shutdown()` ends it.
final class RcloneDaemon: Sendable {
    private let argv: [String]
    private let environment: [String]
    private let authorization: String
    private let process = ChildProcess()
    private let queue = DispatchQueue(label: "shutter.upload.rcd")
    private struct State {
        var running = false
        /// Where it serves, once it said so.
        var port: UInt16?
        /// Its last line on stderr (why it did not start).
        var lastLine = ""
        var paused = false
        /// The jobs under way (`pause()` stops them).
        var jobs: Set<Int> = []
    }
    private let state = Mutex(State())

    init(setup: UploadSetup, bandwidth: String, scratch: String) {
        let password = (0..<4).map { _ in String(UInt64.random(in: 0...UInt64.max), radix: 36) }.joined()
        // --contimeout/--timeout: a remote that stops answering fails a call within about a
        // minute; one low-level retry: one that refuses fails within seconds.
        var args = [setup.rclone, "--config", setup.rcloneConfig, "rcd", "--rc-addr", "127.0.0.1:0",
                    "--transfers", "2", "--low-level-retries", "1", "--contimeout", "15s", "--timeout", "60s"]
        if !bandwidth.isEmpty { args += ["--bwlimit", bandwidth] }
        // Ended with the thread that started it (which waits for it), so a connector killed
        // with SIGKILL leaves no rclone behind.
        argv = TiedExec.argv(args)
        environment = ["PATH=/usr/bin:/bin", "HOME=\(scratch)", "LANG=C.UTF-8", "RCLONE_RC_USER=shutter",
                       "RCLONE_RC_PASS=\(password)"]
        authorization = "Basic " + Data("shutter:\(password)".utf8).base64EncodedString()
    }

    /// Stops the jobs under way (their calls fail) and refuses new ones until `resume()`.
    func pause() {
        let (jobs, port) = state.withLock { s in
            s.paused = true
            return (s.jobs, s.port)
        }
        guard let port else { return }
        for id in jobs { _ = try? post(port, "job/stop", ["jobid": .int(id)]) }
    }

    func resume() { state.withLock { $0.paused = false } }

    /// Ends the daemon and what it was doing, for good.
    func shutdown() {
        state.withLock { $0.paused = true }
        process.stop()
    }

    /// A job under way in the daemon.
    struct Job: Sendable {
        let id: Int
        let command: String
        let port: UInt16
        let began: UInt64
    }

    /// Runs `command` ("sync/copy", "operations/list", ...) as a job and waits for its end.
    func call(_ command: String, _ params: JSONObject,
              progress: ((JSONObject) -> Void)? = nil) throws(Rclone.Failure) -> JSONObject {
        try wait(try start(command, params), progress: progress)
    }

    /// Starts `command` as a job of the daemon (two may run at once: a copy and a hash).
    func start(_ command: String, _ params: JSONObject) throws(Rclone.Failure) -> Job {
        let began = DispatchTime.now().uptimeNanoseconds
        let port = try ensureRunning()
        var params = params
        params["_async"] = .bool(true)
        if state.withLock({ $0.paused }) { throw Rclone.Failure(description: "rclone \(command): uploads paused") }
        let started = try post(port, command, params)
        guard case .int(let id)? = started["jobid"] else {
            throw Rclone.Failure(description: "rclone \(command): no job (\(JSONValue.object(started).rendered(pretty: false)))")
        }
        // A pause between the check above and here: this job is stopped too.
        let paused = state.withLock { s in
            s.jobs.insert(id)
            return s.paused
        }
        if paused { _ = try? post(port, "job/stop", ["jobid": .int(id)]) }
        return Job(id: id, command: command, port: port, began: began)
    }

    /// Waits for the end of `job`, telling `progress` its stats (`core/stats` of the job) about
    /// each second. Its output, or why it failed.
    func wait(_ job: Job, progress: ((JSONObject) -> Void)? = nil) throws(Rclone.Failure) -> JSONObject {
        defer {
            state.withLock { _ = $0.jobs.remove(job.id) }
            let took = Double(DispatchTime.now().uptimeNanoseconds - job.began) / 1e9
            Log("shutter.upload").debug("rclone \(job.command): \((took * 1000).rounded() / 1000) s")
        }
        var pause: UInt32 = 2_000
        var lastStats = DispatchTime.now().uptimeNanoseconds
        while true {
            usleep(pause)
            pause = min(pause * 2, 50_000)
            let status = try post(job.port, "job/status", ["jobid": .int(job.id)])
            if case .bool(true)? = status["finished"] {
                if case .bool(true)? = status["success"] {
                    if case .object(let out)? = status["output"] { return out }
                    return [:]
                }
                let error: String
                if case .string(let e)? = status["error"] { error = e } else { error = "no reason given" }
                throw Self.failure(job.command, error)
            }
            let now = DispatchTime.now().uptimeNanoseconds
            if let progress, now - lastStats >= 1_000_000_000 {
                lastStats = now
                progress(try post(job.port, "core/stats", ["group": .string("job/\(job.id)")]))
            }
        }
    }

    /// Stops `job` and forgets it (its caller failed before waiting for it).
    func abandon(_ job: Job) {
        _ = try? post(job.port, "job/stop", ["jobid": .int(job.id)])
        state.withLock { _ = $0.jobs.remove(job.id) }
    }

    static func failure(_ command: String, _ error: String) -> Rclone.Failure {
        let text = error.lowercased()
        let unreachable = ["failed to create file system", "couldn't connect", "connection refused", "i/o timeout",
                           "no such host", "network is unreachable", "no route to host"].contains { text.contains($0) }
        let notFound = text.contains("directory not found") || text.contains("object not found")
        return Rclone.Failure(description: "rclone \(command) failed: \(String(error.prefix(400)))", notFound: notFound,
                              unreachable: unreachable)
    }

    /// The port it serves on, starting it when it does not run.
    private func ensureRunning() throws(Rclone.Failure) -> UInt16 {
        let start = state.withLock { s -> Bool in
            if s.running { return false }
            s.running = true
            s.port = nil
            return true
        }
        if start {
            queue.async { [self] in
                var why = ""
                do {
                    let outcome = try process.run(argv, environment: environment) { line in
                        self.state.withLock { s in
                            s.lastLine = line
                            if s.port == nil, let port = Self.servingPort(line) { s.port = port }
                        }
                    }
                    why = outcome.signal.map { "ended by signal \($0)" } ?? "exit status \(outcome.status ?? -1)"
                } catch {
                    why = "\(error)"
                }
                state.withLock { s in
                    s.running = false
                    s.port = nil
                    if !why.isEmpty { s.lastLine = s.lastLine.isEmpty ? why : "\(why): \(s.lastLine)" }
                }
            }
        }
        for _ in 0..<1500 {
            let (running, port, last) = state.withLock { ($0.running, $0.port, $0.lastLine) }
            if let port { return port }
            // Not a file's fault: the batch is sent together again (`unreachable`).
            if !running { throw Rclone.Failure(description: "rclone rcd did not start (\(last))", unreachable: true) }
            usleep(10_000)
        }
        throw Rclone.Failure(description: "rclone rcd did not start within 15 s", unreachable: true)
    }

    /// 51234 from "... NOTICE: Serving remote control on http://127.0.0.1:51234/".
    static func servingPort(_ line: String) -> UInt16? {
        guard let r = line.firstRange(of: "Serving remote control on http://127.0.0.1:") else { return nil }
        return UInt16(line[r.upperBound...].prefix { $0.isNumber })
    }

    /// One HTTP/1.0 POST (a body that ends where the connection does: no chunks to undo).
    private func post(_ port: UInt16, _ command: String, _ params: JSONObject) throws(Rclone.Failure) -> JSONObject {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Rclone.Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(port.bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7f00_0001).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            throw Rclone.Failure(description: "rclone rcd does not answer on 127.0.0.1:\(port): \(String(cString: strerror(errno)))",
                                 unreachable: true)
        }
        let body = JSONValue.object(params).rendered(pretty: false)
        let request = "POST /\(command) HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: \(authorization)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
        PlainIO.write(fd, request)  // a failed send shows as no answer
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 { reply += buffer[0..<n]; continue }
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                throw Rclone.Failure(description: "rclone rcd: no answer to \(command): \(String(cString: strerror(errno)))",
                                     unreachable: true)
            }
            break
        }
        let text = String(decoding: reply, as: UTF8.self)
        guard let split = text.firstRange(of: "\r\n\r\n") else {
            throw Rclone.Failure(description: "rclone rcd: no answer to \(command) (the daemon ended?)", unreachable: true)
        }
        let statusLine = text[..<split.lowerBound].prefix { $0 != "\r" }
        let code = Int(statusLine.split(separator: " ").dropFirst().first ?? "") ?? 0
        guard case .object(let object)? = try? JSONParser.parse(String(text[split.upperBound...])).value else {
            throw Rclone.Failure(description: "rclone rcd: \(statusLine) to \(command)")
        }
        guard code == 200 else {
            if case .string(let error)? = object["error"] { throw Self.failure(command, error) }
            throw Rclone.Failure(description: "rclone rcd: \(statusLine) to \(command)")
        }
        return object
    }
}
