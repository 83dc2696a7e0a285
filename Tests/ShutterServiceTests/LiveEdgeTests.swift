// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterWeb
import XCTest

/// The RTSP server's edges on the real shutterd (simulated board), through the scenarios of
/// Tests/rtsp/rtsp_edges.py (a raw RTSP client of their own): no client can freeze another
/// viewer, strangers hold only bounded descriptors and memory, wrong guesses slow only their
/// own address, a NUL ends no password, a viewer that leaves finds its place again, and a
/// fuzz run of mutated requests leaves the service answering. No GStreamer CRITICAL in any log.
final class LiveEdgeTests: XCTestCase {
    static let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("rtsp").path

    /// shutterd with the page's password and a view token, RTSP on any free port, under an
    /// open-file limit of 1024 (systemd's default soft limit) that it cannot raise.
    func startDaemon() throws -> (DaemonHarness, port: String, token: String) {
        let hash = try XCTUnwrap(PasswordHash.make(WebScripts.password))
        let d = try DaemonHarness(config: """
            {"web": {"enabled": true, "listen": "127.0.0.1:0", "passwordHash": "\(hash)"},
             "video": {"width": 1280, "height": 720, "prerollSeconds": 2},
             "live": {"rtsp": {"enabled": true, "listen": "127.0.0.1:0"}}}
            """)
        d.launcher = ["/usr/bin/prlimit", "--nofile=1024:1024"]
        try d.start()
        let base = try LiveRTSPTests.rtspBase(d)
        let token = try LiveRTSPTests.addToken(d, "edge")
        return (d, String(base.split(separator: ":").last!), token)
    }

    /// Runs the scenarios in turn; each one's output is printed, its failures asserted.
    func run(_ scenarios: [String], _ d: DaemonHarness, port: String, token: String, extra: [String: String] = [:]) throws {
        for scenario in scenarios {
            var env = ["RTSP_HOST": "127.0.0.1", "RTSP_PORT": port, "TOKEN": token, "PASSWORD": WebScripts.password,
                       "SHUTTERCTL": DaemonHarness.binDir + "/shutterctl", "SOCKET": d.socket,
                       "DAEMON_PID": "\(d.process!.processIdentifier)"]
            env.merge(extra) { _, new in new }
            print("rtsp-edge \(scenario):")
            let (status, text) = try WebScripts.python([Self.dir + "/rtsp_edges.py", scenario], env: env)
            XCTAssertEqual(status, 0, "scenario \(scenario): \(text.suffix(3000))")
        }
        XCTAssertFalse(d.log().contains("CRITICAL"), "a GStreamer or GLib CRITICAL in the log:\n\(d.log().suffix(3000))")
    }

    /// A second client on another URL, bare SETUPs (200, 401, 404, 461) and a refused fifth
    /// viewer leave every admitted viewer at the stream's rate; a NUL in the password; wrong
    /// guesses from one address while the owner logs in from another; 300 immediate reconnects.
    func testNoClientFreezesAnotherGuessesSlowOnlyThemselves() throws {
        let (d, port, token) = try startDaemon()
        defer { d.stop() }
        try run(["freeze", "nul", "guesses", "reconnects"], d, port: port, token: token)
    }

    /// 1,000 connections that send nothing, from 50 addresses, for 20 s while taps go on.
    func testIdleStrangersCostNoPhoto() throws {
        let (d, port, token) = try startDaemon()
        defer { d.stop() }
        try run(["idle"], d, port: port, token: token, extra: ["IDLE_SECONDS": "20", "IDLE_CONNECTIONS": "1000",
                                                               "MAX_CONNECTIONS": "32"])
    }

    /// RTSP-over-HTTP tunnels refused (the same cookie on several logged-in connections);
    /// unauthenticated bodies of 200 MB and headers of 16 MB (also after an answered
    /// request); then 1,500 mutated requests (at most 40 s; the seed is printed, FUZZ_SEED
    /// repeats a run).
    func testLargeRequestsAndAFuzzRun() throws {
        let (d, port, token) = try startDaemon()
        defer { d.stop() }
        try run(["tunnel", "announce", "fuzz"], d, port: port, token: token,
                extra: ["FUZZ_COUNT": "1500", "FUZZ_SECONDS": "40"])
    }

    /// make bench: an hour (BENCH_CHURN_SECONDS) of viewers coming and going with taps and
    /// holds; the resident memory after it stays within 32 MB of the steady state (the budget
    /// on a 512 MB Zero 2 W, docs/performance.md). Prints the `churn-rss` line.
    func testViewerChurnMemory() throws {
        guard ProcessInfo.processInfo.environment["SHUTTER_BENCH"] == "1" else {
            throw XCTSkip("a benchmark: make bench runs it (SHUTTER_BENCH=1)")
        }
        let seconds = ProcessInfo.processInfo.environment["BENCH_CHURN_SECONDS"] ?? "3600"
        let (d, port, token) = try startDaemon()
        defer { d.stop() }
        try run(["churn"], d, port: port, token: token, extra: ["CHURN_SECONDS": seconds, "CHURN_BUDGET_MB": "32"])
    }
}
