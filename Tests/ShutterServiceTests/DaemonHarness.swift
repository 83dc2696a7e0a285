// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
@testable import ShutterService

/// Runs the real `shutterd` binary on the simulated board and talks to it only
/// through `shutterctl`, signals and the files it writes.
final class DaemonHarness {
    let dir: String
    let socket: String
    let storage: String
    var process: Process?
    let logPath: String
    var extraArgs: [String]
    var board = "sim"
    /// A program that runs shutterd (`systemd-socket-activate -l ADDR`); empty = run it directly.
    var launcher: [String] = []

    static var binDir: String {
        // The test bundle sits beside the products in .build/<triple>/debug.
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        for _ in 0..<3 {
            if FileManager.default.fileExists(atPath: dir.appendingPathComponent("shutterd").path) { return dir.path }
            dir = dir.deletingLastPathComponent()
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug").path
    }

    init(storage: String? = nil, config: String? = nil, extraArgs: [String] = []) throws {
        dir = try Self.makeTempDir()
        socket = dir + "/c.sock"
        self.storage = storage ?? dir + "/data"
        logPath = dir + "/shutterd.log"
        var args = extraArgs
        if let config {
            let path = dir + "/shutter.json"
            try config.write(toFile: path, atomically: true, encoding: .utf8)
            args += ["--config", path]
        }
        self.extraArgs = args
    }

    static func makeTempDir() throws -> String {
        var template = Array("/tmp/shutter-e2e-XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { throw NSError(domain: "mkdtemp", code: Int(errno)) }
        return String(cString: p)
    }

    func start(waitReady: Bool = true) throws {
        let p = Process()
        let args = ["--board", board, "--storage", storage, "--control-socket", socket] + extraArgs
        if let program = launcher.first {
            p.executableURL = URL(fileURLWithPath: program)
            p.arguments = Array(launcher.dropFirst()) + [Self.binDir + "/shutterd"] + args
        } else {
            p.executableURL = URL(fileURLWithPath: Self.binDir + "/shutterd")
            p.arguments = args
        }
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = FileHandle(forWritingAtPath: logPath)!
        log.seekToEndOfFile()
        p.standardOutput = log
        p.standardError = log
        p.standardInput = FileHandle.nullDevice
        try p.run()
        process = p
        if waitReady { try waitFor("ready", timeout: 30) { (try? self.status())?["state"] as? String == "idle" } }
    }

    func waitFor(_ what: String, timeout: TimeInterval, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if (try? condition()) == true { return }
            usleep(50_000)
        }
        throw HarnessError("timed out waiting for \(what); log:\n\(log())")
    }

    func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Runs shutterctl; returns (exit code, stdout JSON object or nil).
    @discardableResult
    func ctl(_ args: String...) throws -> (Int32, [String: Any]?) { try ctl(args) }

    @discardableResult
    func ctl(_ args: [String]) throws -> (Int32, [String: Any]?) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.binDir + "/shutterctl")
        p.arguments = ["--socket", socket] + args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let obj = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        return (p.terminationStatus, obj)
    }

    func status() throws -> [String: Any] {
        let (_, obj) = try ctl("status")
        guard let s = obj?["status"] as? [String: Any] else { throw HarnessError("no status") }
        return s
    }

    func counters() throws -> [String: Int] { (try status()["counters"] as? [String: Int]) ?? [:] }

    func signal(_ sig: Int32) { if let p = process { kill(p.processIdentifier, sig) } }

    /// Waits for the process to exit; returns its status.
    @discardableResult
    func waitExit(timeout: TimeInterval = 30) -> Int32? {
        guard let p = process else { return nil }
        let deadline = Date().addingTimeInterval(timeout)
        while p.isRunning, Date() < deadline { usleep(50_000) }
        if p.isRunning { return nil }
        return p.terminationStatus
    }

    func stop() {
        if let p = process, p.isRunning {
            kill(p.processIdentifier, SIGTERM)
            if waitExit(timeout: 20) == nil { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() }
        }
        if process != nil { checkNoCritical() }
        process = nil
    }

    /// A GLib or GStreamer CRITICAL is a mistake of ours (an assertion the library caught):
    /// no run of shutterd in any test may log one.
    func checkNoCritical(file: StaticString = #filePath, line: UInt = #line) {
        let criticals = log().split(separator: "\n").filter { $0.contains("-CRITICAL **") }
        XCTAssertTrue(criticals.isEmpty, "shutterd logged \(criticals.count) CRITICAL line(s): "
                      + criticals.prefix(3).joined(separator: "\n"), file: file, line: line)
    }

    func files(_ ext: String) -> [String] {
        let dcim = storage + "/DCIM"
        guard let e = FileManager.default.enumerator(atPath: dcim) else { return [] }
        return e.compactMap { $0 as? String }.filter { $0.hasSuffix("." + ext) }.map { dcim + "/" + $0 }.sorted()
    }

    deinit {
        stop()
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Runs a media tool (ffprobe, ffmpeg, exiftool) and returns (status, stdout, stderr).
@discardableResult
func runTool(_ tool: String, _ args: [String]) throws -> (Int32, String, String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = [tool] + args
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
}

/// ffprobe's streams as [codec_type: (codec_name, duration)].
func probe(_ path: String) throws -> (streams: [String: (codec: String, duration: Double)], format: Double) {
    let (_, out, _) = try runTool("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,codec_name,duration:format=duration",
                                              "-of", "json", path])
    let obj = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any] ?? [:]
    var streams: [String: (String, Double)] = [:]
    for s in obj["streams"] as? [[String: Any]] ?? [] {
        streams[s["codec_type"] as? String ?? "?"] = (s["codec_name"] as? String ?? "?", Double(s["duration"] as? String ?? "") ?? -1)
    }
    let fmt = Double((obj["format"] as? [String: Any])?["duration"] as? String ?? "") ?? -1
    return (streams, fmt)
}

func decodesCleanly(_ path: String) throws -> (Bool, String) {
    let (code, _, err) = try runTool("ffmpeg", ["-v", "error", "-i", path, "-f", "null", "-"])
    return (code == 0 && err.isEmpty, err)
}
