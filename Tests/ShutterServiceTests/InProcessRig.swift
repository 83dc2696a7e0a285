// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
import ShutterSim
import ShutterStorage
import Synchronization
@testable import ShutterService

/// The whole service in this process, configured as `shutterd --board sim
/// --config FILE --storage DIR` would be (the same loader, the same board file,
/// the same JSON), every simulated device and timer on a ManualClock the test
/// moves. Only the real work (libjpeg-turbo, fsync, FFmpeg's encoder thread)
/// takes real time, and at each stop of the clock the rig waits until there is none:
/// the board asleep on the clock, and the service's work in flight (`InFlight`, what
/// its jobs, queues, encoders and loop report) none, which includes every event posted
/// so far handled. Requests go in through `CameraService.handle`, as the control
/// socket's do; the log (stderr) is kept for the test to read.
///
/// What a test checks is what the service reported (replies, status, files,
/// their pixels and EXIF) on the clock the test moved: never how fast this
/// machine ran.
final class InProcessRig: @unchecked Sendable {
    // Unchecked: every `let` is Sendable or set once; `told` and `log` lock their own state.
    let clock: ManualClock
    let board: SimBoard
    let service: CameraService
    let run: Task<Int32, Never>
    let config: ShutterConfig
    /// The card (storage.root).
    let root: String
    /// The test's directory (the config file, decoded pictures).
    let dir: String
    let signals: Signals
    let told: Told
    let log: LogFile

    /// `json`: the configuration file, as a test of the real `shutterd` would write it.
    /// `root`/`dir`: a card and directory from an earlier rig (a restart of the service).
    /// `reload`: what SIGHUP rereads (default: the same file again, as shutterd does).
    /// `config`: a configuration built by the test instead (`json` and `root` are then unused).
    /// `cardSync`: how the service's storage syncs the card (a test's may hold the syncs).
    static func start(_ test: XCTestCase, json: String = "{}", root: String? = nil, dir: String? = nil,
                      config given: ShutterConfig? = nil,
                      reload: (@Sendable () throws(ConfigError) -> ShutterConfig)? = nil,
                      clock: ManualClock? = nil, button: (any ButtonInput)? = nil,
                      camera: (inout SimCamera.Settings) -> Void = { _ in },
                      edit: (inout ShutterConfig) -> Void = { _ in },
                      waitReady: Bool = true, powerOff: @escaping @Sendable () -> Void = {},
                      wallClock: any WallClock = SystemWallClock(), parts: [any ServicePart] = [],
                      cardSync: CardSync = CardSync(),
                      timelapsePhoto: @escaping @Sendable (Int, InFlight) -> Void = { _, _ in },
                      file: StaticString = #filePath, line: UInt = #line) async throws -> InProcessRig {
        let dir = try dir ?? DaemonHarness.makeTempDir()
        let card = root ?? dir + "/data"
        let configPath = dir + "/shutter.json"
        if given == nil { try json.write(toFile: configPath, atomically: true, encoding: .utf8) }
        let boards = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("boards").path
        let overrides = ["board.name": "sim", "storage.root": card, "control.socketPath": dir + "/c.sock"]
        let load: @Sendable () throws(ConfigError) -> ShutterConfig = { () throws(ConfigError) -> ShutterConfig in
            try ConfigLoader.load(configFile: configPath, defaultConfigFile: nil, overrides: overrides,
                                  boardSearchPath: [boards])
        }
        var config = try given ?? load()
        edit(&config)
        let root = config.storage.root
        let clock = clock ?? ManualClock(start: .milliseconds(1_000_000))
        var roles = BoardRoles.simulated(config: config, clock: clock, camera: camera)
        if let button { roles.button = button }
        let told = Told(clock: clock, powerOff: powerOff, cardSync: cardSync, timelapsePhoto: timelapsePhoto)
        let log = try LogFile()
        // The time stamp as shutterd makes it (ServiceRunner), on the rig's clocks.
        let overlay = try OverlaySetup.make(config: config, clock: clock, wallClock: wallClock)
        let service = CameraService(config: config, roles: roles, hooks: told.hooks, clock: clock, wallClock: wallClock,
                                    reloadConfig: reload ?? (given == nil ? load : nil), preview: nil, overlay: overlay)
        let rig = InProcessRig(clock: clock, board: roles.sim!, service: service,
                               run: Task { await service.run(parts: parts) }, config: config, root: root, dir: dir,
                               signals: Signals(service: service), told: told, log: log)
        test.addTeardownBlock { await rig.tearDown() }
        if waitReady {
            try await rig.advance(until: "ready", file: file, line: line) { await service.status().state == "idle" }
        }
        return rig
    }

    private init(clock: ManualClock, board: SimBoard, service: CameraService, run: Task<Int32, Never>,
                 config: ShutterConfig, root: String, dir: String, signals: Signals,
                 told: Told, log: LogFile) {
        self.clock = clock
        self.board = board
        self.service = service
        self.run = run
        self.config = config
        self.root = root
        self.dir = dir
        self.signals = signals
        self.told = told
        self.log = log
    }

    // MARK: The clock

    /// Moves the clock in 10 ms steps (stopping at every deadline on the way) until
    /// `done`, the service's real work done at each step. Fails once `limit` of the clock
    /// has passed.
    func advance(until what: String, limit: Duration = .seconds(60),
                 file: StaticString = #filePath, line: UInt = #line, _ done: () async -> Bool) async throws {
        let end = clock.now() + limit
        while !(await done()) {
            guard clock.now() < end else {
                XCTFail("\(what): not within \(limit) of the clock\n\(log.text.suffix(3000))", file: file, line: line)
                throw HarnessError("\(what): not within \(limit)")
            }
            await step(.milliseconds(10))
        }
    }

    func advance(by d: Duration) async {
        await step(d)
    }

    /// The clock to now + `d`, stopping at every deadline; at each stop the board
    /// settles, the off-clock work finishes, and the loop has handled every event
    /// posted so far, before the clock moves on.
    private func step(_ d: Duration) async {
        let board = self.board, service = self.service, work = service.ctx.work, log = self.log
        if clockWaitsForWork {
            let stuck = Mutex(false)
            await clock.advance(by: d) {
                if stuck.withLock({ $0 }) { return await board.settle(consumers: true) }
                if await !Self.settle(board: board, work: work, log: log) { stuck.withLock { $0 = true } }
            }
            // Failed already: the rest of the test does not wait a minute at every stop.
            if stuck.withLock({ $0 }) { clockWaitsForWork = false }
        } else {
            await clock.advance(by: d) {
                await board.settle(consumers: true)
                await Self.loopCaughtUp(service)
            }
        }
    }

    /// False while a test makes work hang on purpose (a card whose sync takes seconds of
    /// real time): the clock then moves on with that work in flight, as real time would,
    /// each stop waiting for the board and the loop (every event posted so far handled)
    /// but not for the jobs, queues and encoders. Set and read by the test's task only.
    var clockWaitsForWork: Bool {
        get { waitsForWork.withLock { $0 } }
        set { waitsForWork.withLock { $0 = newValue } }
    }
    private let waitsForWork = Mutex(true)

    /// Returns once the loop has handled every event posted before: a `status` request
    /// goes in behind them (the inbox keeps the order) and is answered.
    private static func loopCaughtUp(_ service: CameraService) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            service.post(.request(.status, Reply { _ in c.resume() }))
        }
    }

    /// Returns once nothing can happen without the clock: the board's devices asleep on
    /// it (and the microphone's reader caught up), and no work of the service in flight,
    /// both seen in one look (the work's count unchanged around the board's check: what
    /// the board does next, the service started, and what the service waits for from the
    /// board, the board's activity holds). No CPU reading, no sleep: each wait is woken by
    /// what it waits for.
    /// False when the work did not end (the test has failed).
    static func settle(board: SimBoard, work: InFlight, log: LogFile) async -> Bool {
        while true {
            let before = work.snapshot
            guard before.count == 0 else {
                guard await untilIdle(work, log: log) else { return false }
                continue
            }
            await board.settle(consumers: true)
            if work.snapshot == before { return true }
        }
    }

    /// `work.untilIdle()`, bounded by a minute of real time: work in flight that does not
    /// end (a token not given back while its task waits for the clock: a bug) fails the test
    /// instead of hanging the suite.
    private static func untilIdle(_ work: InFlight, log: LogFile) async -> Bool {
        let ended = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await work.untilIdle(); return !Task.isCancelled }
            group.addTask { try? await Task.sleep(nanoseconds: 60_000_000_000); return false }
            let first = await group.next()!
            group.cancelAll()
            return first
        }
        if !ended && work.count > 0 {
            XCTFail("the service's work in flight (\(work.count)) did not end within a minute of real time "
                    + "while the clock stood still\n\(log.text.suffix(3000))")
            return false
        }
        return true
    }

    // MARK: Requests

    /// Sends a request as a client would; the answer is read later (`reply`).
    /// Posted at once, in the order the test sends (as `handle` posts it): the
    /// loop takes it before the clock moves again.
    func send(_ request: ControlRequest) -> Pending {
        let p = Pending()
        switch ServiceCommand.decode(request) {
        case .success(let command): service.post(.request(command, Reply { p.set($0) }))
        case .failure(let refusal): p.set(refusal.reply)  // refused where it arrives, as the socket does
        }
        return p
    }

    /// Sends a request and moves the clock until it is answered.
    func ask(_ request: ControlRequest, limit: Duration = .seconds(60), file: StaticString = #filePath,
             line: UInt = #line) async throws -> ControlReply {
        let p = send(request)
        try await advance(until: "the answer to \(request.cmd)", limit: limit, file: file, line: line) { p.reply != nil }
        return p.reply!
    }

    func ask(_ cmd: String, _ key: String? = nil, _ value: JSONValue? = nil, file: StaticString = #filePath,
             line: UInt = #line) async throws -> ControlReply {
        try await ask(ControlRequest(cmd: cmd, key: key, value: value), file: file, line: line)
    }

    func status() async -> ServiceStatus { await service.status() }

    /// The files a photo reply names (fails the test when there is none).
    func photo(file: StaticString = #filePath, line: UInt = #line) async throws -> String {
        let r = try await ask(ControlRequest(cmd: "tap"), file: file, line: line)
        XCTAssertTrue(r.ok, "tap: \(r)\n\(log.text.suffix(2000))", file: file, line: line)
        return try XCTUnwrap(r.files?.first, "tap: \(r)", file: file, line: line)
    }

    /// Moves the clock until the state is `state`.
    func wait(for state: String, limit: Duration = .seconds(60), file: StaticString = #filePath,
              line: UInt = #line) async throws {
        try await advance(until: "state \(state)", limit: limit, file: file, line: line) {
            await self.service.status().state == state
        }
    }

    // MARK: The end

    /// SIGTERM: the service finishes its files; the clock moves until `run` returns.
    func stop(file: StaticString = #filePath, line: UInt = #line) async throws -> Int32 {
        service.stop()
        return try await exitCode(file: file, line: line)
    }

    /// Moves the clock until `run` returns (after a stop, a give-up or power off).
    func exitCode(limit: Duration = .seconds(150), file: StaticString = #filePath, line: UInt = #line) async throws -> Int32 {
        // The service's own record, not `run.value`: that reaches a task of ours only after
        // its work ended, and a slow hop there let the clock run out meanwhile.
        try await advance(until: "the service's exit", limit: limit, file: file, line: line) { service.exited != nil }
        return service.exited!
    }

    private func tearDown() async {
        // A no-op when the service has ended already.
        service.stop()
        // Bounded: a test that failed midway must not hang the suite.
        for _ in 0..<20_000 where service.exited == nil { await advance(by: .milliseconds(10)) }
        log.stop()
    }

    /// Video frames the clips' encoders dropped being behind, as the log says
    /// ("clip lost N video frames (encoder behind)").
    func encoderDroppedFrames() -> Int {
        log.text.split(separator: "\n").compactMap { line -> Int? in
            guard let r = line.range(of: "clip lost ") else { return nil }
            return Int(line[r.upperBound...].prefix { $0.isNumber })
        }.reduce(0, +)
    }

    // MARK: The card

    func files(_ ext: String) -> [String] {
        let dcim = root + "/DCIM"
        let all = FileManager.default.enumerator(atPath: dcim)?.compactMap { $0 as? String } ?? []
        return all.filter { $0.hasSuffix("." + ext) }.map { dcim + "/" + $0 }.sorted()
    }

    /// Hidden files the service left at the card's top (temp clips, `.shutter-pending*`).
    func litter() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root).filter { $0.hasPrefix(".shutter-pending") }
    }
}

/// The signals the process would get (SIGHUP, SIGUSR1...), posted as the service's
/// signal task posts each one: at once, in order, before the clock moves again.
struct Signals: Sendable {
    let service: CameraService
    func yield(_ s: ServiceSignal) { service.post(.signal(s)) }
}

/// A reply to come, set once from another task.
final class Pending: @unchecked Sendable {
    // Unchecked: the lock guards `value`.
    private let lock = NSLock()
    private var value: ControlReply?
    func set(_ r: ControlReply) { lock.lock(); value = r; lock.unlock() }
    var reply: ControlReply? { lock.lock(); defer { lock.unlock() }; return value }
}

/// What the service told its supervisor (the hooks systemd's notifier takes), each with the clock's time.
final class Told: @unchecked Sendable {
    // Unchecked: the lock guards `lines`.
    private let lock = NSLock()
    private var lines: [(MonotonicTime, String)] = []
    private let clock: any MonotonicClock
    private let powerOff: @Sendable () -> Void
    private let cardSync: CardSync
    private let timelapsePhoto: @Sendable (Int, InFlight) -> Void

    init(clock: any MonotonicClock, powerOff: @escaping @Sendable () -> Void = {}, cardSync: CardSync = CardSync(),
         timelapsePhoto: @escaping @Sendable (Int, InFlight) -> Void = { _, _ in }) {
        self.clock = clock
        self.powerOff = powerOff
        self.cardSync = cardSync
        self.timelapsePhoto = timelapsePhoto
    }

    func add(_ s: String) { let t = clock.now(); lock.lock(); lines.append((t, s)); lock.unlock() }
    var all: [(MonotonicTime, String)] { lock.lock(); defer { lock.unlock() }; return lines }
    func lines(containing s: String) -> [(MonotonicTime, String)] { all.filter { $0.1.contains(s) } }

    var hooks: ServiceHooks {
        var h = ServiceHooks(ready: { self.add("READY=1 STATUS=" + $0) }, status: { self.add("STATUS=" + $0) },
                     watchdogPing: { self.add("WATCHDOG=1") }, stopping: { self.add("STOPPING=1") },
                     powerOff: { self.add("POWEROFF"); self.powerOff() },
                     extendTimeout: { self.add("EXTEND_TIMEOUT_USEC=\($0.nanoseconds / 1000)") },
                     cardSync: cardSync, exitWithoutWaiting: { self.add("EXIT WITHOUT WAITING \($0)") })
        h.timelapsePhoto = timelapsePhoto
        return h
    }
}

/// This process's stderr (the service's log) into a file, readable while the test
/// runs; `stop` puts stderr back. One at a time (a rig's teardown stops it).
final class LogFile: @unchecked Sendable {
    // Unchecked: set once in init; `stop` runs once, from the teardown.
    private let path = NSTemporaryDirectory() + "shutter-log-\(UUID().uuidString)"
    private let fd: Int32
    private let saved: Int32
    private let stopped = NSLock()
    private var isStopped = false

    init() throws {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o600)
        guard fd >= 0 else { throw NSError(domain: "open", code: Int(errno)) }
        saved = dup(2)
        dup2(fd, 2)
    }

    var text: String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    func stop() {
        stopped.lock(); defer { stopped.unlock() }
        guard !isStopped else { return }
        isStopped = true
        dup2(saved, 2)
        close(saved)
        close(fd)
        try? FileManager.default.removeItem(atPath: path)
    }
}

extension JSONValue {
    /// A number, int or double, as a JSON reader sees it.
    var number: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    /// An array of numbers (nil when any element is not one).
    var numbers: [Double]? {
        guard case .array(let a) = self else { return nil }
        let n = a.compactMap(\.number)
        return n.count == a.count ? n : nil
    }

    var strings: [String]? {
        guard case .array(let a) = self else { return nil }
        let s = a.compactMap { v -> String? in if case .string(let s) = v { return s }; return nil }
        return s.count == a.count ? s : nil
    }
}
