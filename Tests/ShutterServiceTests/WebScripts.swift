// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// The web page's end-to-end scripts (Tests/web/*.py) against a real shutterd:
/// where they are, the page's address from the daemon's log, and one way to run
/// them (WebEndToEndTests, WebTokenEndToEndTests).
enum WebScripts {
    static let password = "correct horse battery"
    static let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("web").path

    /// The page's address from the newest "web page on" line (a restart appends another).
    static func url(_ d: DaemonHarness) throws -> String {
        var url = ""
        try d.waitFor("the web page's address", timeout: 10) {
            let found = d.log().ranges(of: #/web page on http://127\.0\.0\.1:[0-9]+/#)
            guard let r = found.last else { return false }
            url = String(d.log()[r].dropFirst("web page on ".count))
            return true
        }
        return url
    }

    /// Runs `name` with BASE_URL, STORAGE, SHUTTERCTL, SOCKET, PASSWORD, OUT_DIR and
    /// `extra` in its environment; its exit status and output (printed too).
    static func run(_ name: String, _ d: DaemonHarness, _ url: String, extra: [String: String] = [:]) throws -> (Int32, String) {
        var env: [String: String] = [:]
        env["BASE_URL"] = url
        env["STORAGE"] = d.storage
        env["SHUTTERCTL"] = DaemonHarness.binDir + "/shutterctl"
        env["SOCKET"] = d.socket
        env["PASSWORD"] = password
        env["OUT_DIR"] = URL(fileURLWithPath: dir).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build").path
        env.merge(extra) { _, new in new }
        return try python([dir + "/" + name], env: env)
    }

    /// Runs python3 with `arguments` and `env` added to this process's environment; its exit
    /// status and output (stdout and stderr together, printed too).
    static func python(_ arguments: [String], env: [String: String]) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = arguments
        p.environment = ProcessInfo.processInfo.environment.merging(env) { _, new in new }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        print(text)
        return (p.terminationStatus, text)
    }
}
