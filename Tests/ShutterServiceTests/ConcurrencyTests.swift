// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
@testable import ShutterService

/// One request, one answer: many clients and client button presses at once, on the
/// service in this process on the manual clock (InProcessRig). Every ok reply names
/// files no other reply names, every file on disk was named by exactly one reply,
/// every refusal says it was busy (or why not), no client waits past its bound (on
/// the service's clock), and the service is up afterwards. (The same through the
/// control socket, on the real shutterd: EndToEndTests.)
final class ConcurrencyTests: XCTestCase {
    /// What each client got, with how long it waited on the clock.
    final class Book: @unchecked Sendable {
        // Unchecked: the lock guards `outcomes`.
        private let lock = NSLock()
        private var outcomes: [OutcomeBook.Outcome] = []
        func add(_ o: OutcomeBook.Outcome) { lock.lock(); outcomes.append(o); lock.unlock() }
        var all: [OutcomeBook.Outcome] { lock.lock(); defer { lock.unlock() }; return outcomes }
    }

    func testManyClientsAndButtonPressesAtOnceGetExactlyTheirOwnFiles() async throws {
        let d = try await InProcessRig.start(self, json: #"{"shutdown": {"taps": 0}}"#)
        let book = Book()
        let service = d.service, clock = d.clock
        @Sendable func record(_ name: String, bound: Double, _ request: ControlRequest) async {
            let t0 = clock.now()
            let reply = await service.handle(request)
            book.add(OutcomeBook.Outcome(request: name, ok: reply.ok, files: reply.files ?? [], error: reply.error,
                                         seconds: Double((clock.now() - t0).nanoseconds) / 1e9, bound: bound))
        }
        // Seeded, so a failure can be replayed: which request each client sends.
        var rng = SplitMix(seed: 0x5eed_0010)
        let plans: [[Int]] = (0..<4).map { _ in (0..<10).map { _ in Int(rng.next() % 3) } }
        // Each client sends at instants of its own (a few µs apart), as on the wall
        // clock no two come at the same nanosecond: a press at the very instant a
        // recording request arrives is the known issue LoopReplayTests shows
        // (testATapWhosePressCameTheInstantARecordingStartedIsTakenOrRefused).
        var clients: [Task<Void, Never>] = []
        for (k, plan) in plans.enumerated() {
            clients.append(Task {
                for kind in plan {
                    try? await clock.sleep(until: clock.now() + .microseconds(100 + 37 * Int64(k)))
                    switch kind {
                    case 0: await record("tap", bound: 45 + 5, ControlRequest(cmd: "tap"))
                    case 1: await record("photo", bound: 45 + 5, ControlRequest(cmd: "photo"))
                    default: await record("hold 0.6", bound: 45.6 + 5, ControlRequest(cmd: "hold", seconds: 0.6))
                    }
                }
            })
        }
        // The client's button, at the same time: short presses (photos) and one long one (a clip).
        clients.append(Task {
            for i in 0..<6 {
                _ = await service.handle(ControlRequest(cmd: "press"))
                try? await clock.sleep(until: clock.now() + .milliseconds(i == 3 ? 1400 : 150))
                await record(i == 3 ? "button hold" : "button tap", bound: 45 + 5, ControlRequest(cmd: "release"))
                try? await clock.sleep(until: clock.now() + .milliseconds(100) + .microseconds(13))
            }
        })
        let finished = Pending()
        let all = clients
        Task {
            for c in all { await c.value }
            finished.set(ControlReply(ok: true))
        }
        try await d.advance(until: "clients finished", limit: .seconds(600)) { finished.reply != nil }

        let outcomes = book.all
        let named = outcomes.flatMap(\.files)
        XCTAssertEqual(Set(named).count, named.count, "no file is named by two replies: \(named.sorted())")
        let onDisk = Set(d.files("JPG") + d.files("MP4"))
        XCTAssertEqual(onDisk, Set(named), "every file on disk was named by exactly one reply, and every named file is there")
        for o in outcomes {
            XCTAssertLessThanOrEqual(o.seconds, o.bound, "\(o.request) waited \(o.seconds) s")
            if o.ok {
                if o.request.hasPrefix("button") {
                    // A press during a recording adds nothing: at most one file, of either kind.
                    XCTAssertLessThanOrEqual(o.files.count, 1, "\(o.request): \(o.files)")
                } else {
                    XCTAssertEqual(o.files.count, 1, "\(o.request): one file, got \(o.files)")
                    let ext = o.request.contains("hold") ? ".MP4" : ".JPG"
                    for f in o.files { XCTAssertTrue(f.hasSuffix(ext), "\(o.request) gave \(f)") }
                }
            } else {
                let e = o.error ?? ""
                XCTAssertTrue(e.hasPrefix("busy: "), "\(o.request) failed without being busy: \(e)")
            }
            XCTAssertFalse((o.error ?? "").contains("timed out"), "\(o.request): \(o.error ?? "")")
        }
        XCTAssertEqual(outcomes.count, 46, "every request answered")
        let ok = outcomes.filter(\.ok).count
        print("concurrency: \(outcomes.count) requests, \(ok) answered with files, \(outcomes.count - ok) refused as busy, \(onDisk.count) files on disk; longest wait \(String(format: "%.2f", outcomes.map(\.seconds).max() ?? 0)) s of the clock")
        XCTAssertGreaterThanOrEqual(ok, 10, "most requests get a capture")
        let state = await d.status().state
        XCTAssertEqual(state, "idle", "the service is up and idle afterwards")
        let last = try await d.ask(ControlRequest(cmd: "tap"))
        XCTAssertTrue(last.ok, "and still takes photos: \(last)")
    }
}

/// Runs shutterctl from many threads and keeps every reply. The lock guards `outcomes`.
final class OutcomeBook: @unchecked Sendable {
    struct Outcome: Sendable {
        var request: String
        var ok: Bool
        var files: [String]
        var error: String?
        var seconds: Double
        var bound: Double
    }

    let socket: String
    private let lock = NSLock()
    private var outcomes: [Outcome] = []

    init(socket: String) { self.socket = socket }

    var all: [Outcome] { lock.lock(); defer { lock.unlock() }; return outcomes }

    func press() { _ = ctl(["press"]) }

    struct Reply: Sendable, CustomStringConvertible {
        var args: [String]
        var ok: Bool
        var files: [String]
        var error: String?
        var description: String { "\(args.joined(separator: " ")): \(ok ? "\(files)" : error ?? "?")" }
    }

    private var replies: [Reply] = []

    /// Runs one request and keeps its reply (for `all`).
    func run(_ args: [String]) {
        let r = ctl(args)
        lock.lock(); replies.append(Reply(args: args, ok: r.code == 0 && r.ok, files: r.files, error: r.error)); lock.unlock()
    }

    var allReplies: [Reply] { lock.lock(); defer { lock.unlock() }; return replies }

    func run(_ request: String, bound: Double, _ args: [String]) {
        let t0 = Date()
        let reply = ctl(args)
        let o = Outcome(request: request, ok: reply.code == 0 && reply.ok, files: reply.files, error: reply.error,
                        seconds: Date().timeIntervalSince(t0), bound: bound)
        lock.lock(); outcomes.append(o); lock.unlock()
    }

    private func ctl(_ args: [String]) -> (code: Int32, ok: Bool, files: [String], error: String?) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: DaemonHarness.binDir + "/shutterctl")
        p.arguments = ["--socket", socket] + args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return (-1, false, [], "shutterctl did not start") }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let obj = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        return (p.terminationStatus, obj?["ok"] as? Bool ?? false, obj?["files"] as? [String] ?? [], obj?["error"] as? String)
    }
}

/// A small seeded generator (SplitMix64): the same plan on every run.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
