// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// A real Mosquitto for the MQTT tests: `mosquitto -c <conf>` on a free port of
/// 127.0.0.1, anonymous clients refused, one user from a password file. Clients are
/// Mosquitto's own `mosquitto_sub` / `mosquitto_pub`, as a user would run them. With
/// `tls`, the listener speaks only TLS, with a server certificate for 127.0.0.1 signed by
/// a throwaway CA made here by openssl (`caFile`).
final class MQTTBroker {
    let dir: String
    let port: Int
    let user = "shutter"
    let password = "s3cret-\(UInt32.random(in: 0...UInt32.max))"
    var passwordFile: String { dir + "/password" }
    /// TLS: the CA that signed the broker's certificate (clients verify against it).
    let caFile: String?
    private(set) var process: Process?
    private var subscribers: [MQTTSubscriber] = []

    static var available: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/mosquitto")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/mosquitto_sub")
    }

    /// `persistent`: the broker keeps sessions and retained messages across its restarts
    /// (a subscriber's session then collects what is published while it is away).
    init(persistent: Bool = false, tls: Bool = false) throws {
        guard Self.available else { throw XCTSkip("mosquitto and mosquitto-clients are not installed (deploy/install-deps.sh --test)") }
        dir = try DaemonHarness.makeTempDir()
        port = try Self.freePort()
        var tlsLines = ""
        if tls {
            let ca = try Self.makeCA(in: dir, name: "ca")
            let (cert, key) = try Self.makeServerCertificate(in: dir, signedBy: ca)
            tlsLines = "\ncafile \(ca.cert)\ncertfile \(cert)\nkeyfile \(key)"
            caFile = ca.cert
        } else {
            caFile = nil
        }
        try password.write(toFile: passwordFile, atomically: true, encoding: .utf8)
        let (code, _, err) = try runTool("mosquitto_passwd", ["-c", "-b", dir + "/users", user, password])
        guard code == 0 else { throw HarnessError("mosquitto_passwd failed: \(err)") }
        // Started as root, mosquitto drops to the `mosquitto` user unless told to stay
        // (which could then not read this test's private directory).
        let conf = (getuid() == 0 ? "user root\n" : "") + """
            listener \(port) 127.0.0.1\(tlsLines)
            allow_anonymous false
            password_file \(dir)/users
            persistence \(persistent)
            persistence_location \(dir)/
            log_dest file \(dir)/broker.log
            """
        try conf.write(toFile: dir + "/mosquitto.conf", atomically: true, encoding: .utf8)
        try start()
    }

    func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        p.arguments = ["-c", dir + "/mosquitto.conf"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        // Listening once a client can connect.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if (try? runTool("mosquitto_pub", auth + ["-t", "probe", "-n"]))?.0 == 0 { return }
            usleep(50_000)
        }
        throw HarnessError("mosquitto did not start on port \(port)")
    }

    var auth: [String] {
        ["-h", "127.0.0.1", "-p", String(port), "-u", user, "-P", password] + (caFile.map { ["--cafile", $0] } ?? [])
    }

    /// `mqtt://` or, with TLS, `mqtts://` to this broker.
    var url: String { "\(caFile == nil ? "mqtt" : "mqtts")://127.0.0.1:\(port)" }

    /// A self-signed CA (its certificate and key) in `dir`, named `name`.
    static func makeCA(in dir: String, name: String) throws -> (cert: String, key: String) {
        let cert = "\(dir)/\(name).pem", key = "\(dir)/\(name).key"
        let (code, _, err) = try runTool("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                                                     "-subj", "/CN=Shutter test CA \(name)", "-keyout", key, "-out", cert])
        guard code == 0 else { throw HarnessError("openssl (CA \(name)): \(err)") }
        return (cert, key)
    }

    /// The broker's certificate for 127.0.0.1 (its subjectAltName), signed by `ca`.
    static func makeServerCertificate(in dir: String, signedBy ca: (cert: String, key: String)) throws -> (cert: String, key: String) {
        let cert = dir + "/server.pem", key = dir + "/server.key", csr = dir + "/server.csr", ext = dir + "/server.ext"
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: ext, atomically: true, encoding: .utf8)
        let (c1, _, e1) = try runTool("openssl", ["req", "-new", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                                                  "-keyout", key, "-out", csr])
        guard c1 == 0 else { throw HarnessError("openssl (server key): \(e1)") }
        let (c2, _, e2) = try runTool("openssl", ["x509", "-req", "-in", csr, "-CA", ca.cert, "-CAkey", ca.key,
                                                  "-CAcreateserial", "-days", "1", "-extfile", ext, "-out", cert])
        guard c2 == 0 else { throw HarnessError("openssl (server certificate): \(e2)") }
        return (cert, key)
    }

    /// A shutterd's configuration with an `mqtt` section for this broker. `extra`: more keys
    /// of that section (`, "key": value`); with TLS, `mqtt.caFile` is this broker's CA unless
    /// `extra` names one. `top`: more sections, each followed by a comma.
    func config(name: String, extra: String = "", top: String = "") -> String {
        let ca = caFile.map { extra.contains("\"caFile\"") ? "" : #", "caFile": "\#($0)""# } ?? ""
        return """
        {"mqtt": {"enabled": true, "url": "\(url)", "username": "\(user)",
                  "passwordFile": "\(passwordFile)", "name": "\(name)"\(ca)\(extra)},\(top)
         "audio": {"enabled": false}, "video": {"width": 640, "height": 360, "fps": 10},
         "still": {"width": 640, "height": 360}}
        """
    }

    /// mosquitto_pub (MQTT 5); `properties`: `-D PUBLISH …` triples.
    @discardableResult
    func publish(_ topic: String, _ payload: Data, retain: Bool = false, properties: [String] = []) throws -> Int32 {
        let file = dir + "/payload-\(UUID().uuidString)"
        try payload.write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let args = auth + ["-V", "5", "-q", "1", "-t", topic, "-f", file] + (retain ? ["-r"] : []) + properties
        return try runTool("mosquitto_pub", args).0
    }

    func publish(_ topic: String, _ text: String, retain: Bool = false, properties: [String] = []) throws {
        let code = try publish(topic, Data(text.utf8), retain: retain, properties: properties)
        XCTAssertEqual(code, 0, "mosquitto_pub \(topic)")
    }

    /// `session`: a client id with a session the broker keeps (`-c -i`), else a clean one.
    func subscribe(_ topics: String..., session: String? = nil) throws -> MQTTSubscriber {
        let s = try MQTTSubscriber(broker: self, topics: topics, session: session)
        subscribers.append(s)
        return s
    }

    func signal(_ sig: Int32) { if let p = process { kill(p.processIdentifier, sig) } }

    func stop() {
        subscribers.forEach { $0.stop() }
        subscribers.removeAll()
        if let p = process, p.isRunning {
            kill(p.processIdentifier, SIGCONT)
            p.terminate()
            p.waitUntilExit()
        }
        process = nil
    }

    deinit { stop() }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        a.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { throw HarnessError("no free port") }
        return Int(UInt16(bigEndian: a.sin_port))
    }
}

/// One message as a subscriber saw it.
struct MQTTSeen {
    var retained: Bool
    var topic: String
    var payload: Data
    var text: String { String(decoding: payload, as: UTF8.self) }
    var json: [String: Any]? { try? JSONSerialization.jsonObject(with: payload) as? [String: Any] }
    /// When this test process read it.
    var at: Date
    /// When mosquitto_sub printed it (its `%U`, the wall clock).
    var printed: Date?
}

/// `mosquitto_sub -v` on some topics, its messages collected by a reader thread
/// (payloads as hex, so a JPEG is one line); tests wait on what it has seen.
final class MQTTSubscriber: @unchecked Sendable {
    private let process = Process()
    private let lock = NSLock()
    private var seen: [MQTTSeen] = []  // under lock

    init(broker: MQTTBroker, topics: [String], session: String? = nil) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
        let probe = "shutter-test-probe/\(UUID().uuidString)"
        process.arguments = broker.auth + ["-V", "5", "-q", "1", "-F", "%r\t%t\t%U\t%x"] + (topics + [probe]).flatMap { ["-t", $0] }
            + (session.map { ["-c", "-i", $0, "-x", "3600"] } ?? [])
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let handle = out.fileHandleForReading
        let t = Thread { [self] in
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { return }
                buffer.append(chunk)
                while let nl = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[buffer.startIndex..<nl], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...nl)
                    let f = line.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false)
                    guard f.count == 4 else { continue }
                    let m = MQTTSeen(retained: f[0] == "1", topic: String(f[1]), payload: Self.bytes(hex: f[3]), at: Date(),
                                     printed: Double(f[2]).map { Date(timeIntervalSince1970: $0) })
                    lock.lock()
                    seen.append(m)
                    lock.unlock()
                }
            }
        }
        t.start()
        // Subscribed once a message of its own probe topic comes back.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            try broker.publish(probe, "probe")
            if (try? wait("its probe", timeout: 0.5, { $0.contains { $0.topic == probe } ? true : nil })) != nil { return }
        }
        throw HarnessError("mosquitto_sub did not subscribe")
    }

    static func bytes(hex: Substring) -> Data {
        var d = Data(capacity: hex.count / 2)
        var i = hex.startIndex
        while i < hex.endIndex, let j = hex.index(i, offsetBy: 2, limitedBy: hex.endIndex) {
            if let b = UInt8(hex[i..<j], radix: 16) { d.append(b) }
            i = j
        }
        return d
    }

    var messages: [MQTTSeen] {
        lock.lock()
        defer { lock.unlock() }
        return seen
    }

    func on(_ topic: String) -> [MQTTSeen] { messages.filter { $0.topic == topic } }

    /// Waits until `cond` holds for what has been seen; returns it.
    @discardableResult
    func wait<T>(_ what: String, timeout: TimeInterval = 20, _ cond: ([MQTTSeen]) -> T?) throws -> T {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let v = cond(messages) { return v }
            usleep(20_000)
        }
        let tail = messages.suffix(20).map { "\($0.topic) \($0.text.prefix(160))" }.joined(separator: "\n")
        throw HarnessError("timed out after \(timeout) s waiting for \(what); last messages:\n\(tail)")
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}
