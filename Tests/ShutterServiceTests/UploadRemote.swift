// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// A real server for the upload tests, on a free port of 127.0.0.1, and the rclone
/// configuration file naming it as the remote "r": Debian's `rclone serve sftp` or
/// `rclone serve webdav` over a folder of its own, or moto's S3 server (from PyPI, cached
/// by deploy/upload/s3-server.sh) with the bucket "camera". `stop()` and `start()` take the
/// server away and bring it back on the same port, with what it held.
final class UploadRemote {
    enum Kind: String { case sftp, webdav, s3 }

    static let rclone = "/usr/bin/rclone"
    let kind: Kind
    let dir: String
    let port: Int
    /// The served folder (sftp, webdav); S3's objects are read back through rclone.
    var served: String { dir + "/served" }
    var config: String { dir + "/rclone.conf" }
    /// What `upload.remote` names.
    let remote: String
    private var process: Process?
    /// More arguments for `rclone serve` (sftp, webdav) at the next `start()`: `--read-only`.
    var serveArgs: [String] = []

    init(_ kind: Kind) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.rclone) else {
            throw XCTSkip("rclone is not installed (deploy/install-deps.sh --test)")
        }
        self.kind = kind
        dir = try DaemonHarness.makeTempDir()
        port = try MQTTBroker.freePort()
        try FileManager.default.createDirectory(atPath: dir + "/served", withIntermediateDirectories: true)
        let (_, obscured, _) = try runTool(Self.rclone, ["obscure", "p4ss"])
        let pass = obscured.trimmingCharacters(in: .whitespacesAndNewlines)
        let section: String
        switch kind {
        case .sftp:
            section = "type = sftp\nhost = 127.0.0.1\nport = \(port)\nuser = cam\npass = \(pass)\n"
            remote = "r:camera/garden"
        case .webdav:
            section = "type = webdav\nurl = http://127.0.0.1:\(port)\nuser = cam\npass = \(pass)\n"
            remote = "r:camera/garden"
        case .s3:
            section = "type = s3\nprovider = Other\nendpoint = http://127.0.0.1:\(port)\naccess_key_id = test\n"
                + "secret_access_key = test\nregion = us-east-1\n"
            remote = "r:camera/garden"
        }
        try "[r]\n\(section)".write(toFile: config, atomically: true, encoding: .utf8)
        try start()
        if kind == .s3 {
            let (code, _, err) = try rclone(["mkdir", "r:camera"])
            guard code == 0 else { throw HarnessError("rclone mkdir r:camera: \(err)") }
        }
    }

    deinit { stop() }

    func start() throws {
        let p = Process()
        switch kind {
        case .sftp, .webdav:
            p.executableURL = URL(fileURLWithPath: Self.rclone)
            p.arguments = ["serve", kind.rawValue, served, "--addr", "127.0.0.1:\(port)", "--user", "cam", "--pass", "p4ss"] + serveArgs
        case .s3:
            let (code, out, err) = try runTool("/bin/sh", [Self.repo + "/deploy/upload/s3-server.sh"])
            let server = out.trimmingCharacters(in: .whitespacesAndNewlines)
            guard code == 0, FileManager.default.isExecutableFile(atPath: server) else {
                throw XCTSkip("no S3 server: deploy/upload/s3-server.sh failed (\(err.suffix(300)))")
            }
            p.executableURL = URL(fileURLWithPath: server)
            p.arguments = ["-H", "127.0.0.1", "-p", "\(port)"]
        }
        p.environment = ["PATH": "/usr/bin:/bin", "HOME": dir]
        let log = FileHandle(forWritingAtPath: dir + "/server.log") ?? {
            _ = FileManager.default.createFile(atPath: dir + "/server.log", contents: nil)
            return FileHandle(forWritingAtPath: dir + "/server.log")!
        }()
        log.seekToEndOfFile()
        p.standardOutput = log
        p.standardError = log
        try p.run()
        process = p
        // Up when it accepts a connection.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if Self.accepts(port) { return }
            usleep(100_000)
        }
        throw HarnessError("the \(kind) server did not listen on \(port)")
    }

    /// Takes the server away (SIGKILL, as a pulled cable would be to the camera).
    func stop() {
        guard let p = process, p.isRunning else { return }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        process = nil
    }

    /// rclone against the remote, as a user would run it (a clean environment).
    func rclone(_ args: [String]) throws -> (Int32, String, String) {
        try runTool("/usr/bin/env", ["-i", "PATH=/usr/bin:/bin", "HOME=\(dir)", Self.rclone, "--config", config] + args)
    }

    /// Every file under the remote folder (relative path → sha256), the incoming folder apart.
    func files() throws -> (final: [String: String], incoming: [String]) {
        let copy = dir + "/read-back-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let (code, _, err) = try rclone(["copy", remote, copy])
        guard code == 0 || err.contains("directory not found") else { throw HarnessError("rclone copy back: \(err)") }
        var final: [String: String] = [:], incoming: [String] = []
        let base = URL(fileURLWithPath: copy)
        for case let path as String in FileManager.default.enumerator(atPath: copy) ?? NSEnumerator() {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: copy + "/" + path, isDirectory: &isDir), !isDir.boolValue else { continue }
            if path.hasPrefix(".shutter-incoming/") { incoming.append(path); continue }
            final[path] = try Self.sha256(base.appendingPathComponent(path).path)
        }
        return (final, incoming)
    }

    static func sha256(_ path: String) throws -> String {
        let (code, out, err) = try runTool("/usr/bin/sha256sum", [path])
        guard code == 0 else { throw HarnessError("sha256sum \(path): \(err)") }
        return String(out.prefix(64))
    }

    static var repo: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    private static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        a.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
