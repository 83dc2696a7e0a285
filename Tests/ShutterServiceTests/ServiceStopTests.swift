// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
import ShutterSim
@testable import ShutterService

/// Stopping, in process on the manual clock: a clip being recorded is finished
/// first, systemd is told to wait longer while it is (EXTEND_TIMEOUT_USEC), and
/// the run ends with exit 0 and the clip whole.
final class ServiceStopTests: XCTestCase {
    private final class Calls: @unchecked Sendable {
        // Unchecked: the lock guards `extensions` and `stops`.
        private let lock = NSLock()
        private var extensions: [Duration] = []
        private var stops = 0
        func extend(_ d: Duration) { lock.lock(); extensions.append(d); lock.unlock() }
        func stopped() { lock.lock(); stops += 1; lock.unlock() }
        var all: (extensions: [Duration], stops: Int) { lock.lock(); defer { lock.unlock() }; return (extensions, stops) }
    }

    func testStoppingMidClipExtendsSystemdsTimeoutAndFinishesTheClip() async throws {
        var c = ShutterConfig()
        c.storage.root = try DaemonHarness.makeTempDir()
        c.video.width = 320
        c.video.height = 240
        c.video.preset = "ultrafast"
        c.shutdown.taps = 0
        let clock = ManualClock(start: .milliseconds(1_000_000))
        let roles = BoardRoles.simulated(config: c, clock: clock)
        let calls = Calls()
        let service = CameraService(config: c, roles: roles,
                                    hooks: ServiceHooks(stopping: { calls.stopped() }, extendTimeout: { calls.extend($0) },
                                                        exitWithoutWaiting: { _ in }),  // waits (no work outlasts this stop)
                                    clock: clock)
        let run = Task { await service.run() }
        let board = roles.sim!
        func advance(until what: String, _ done: () async -> Bool) async throws {
            let end = clock.now() + .seconds(60)
            while !(await done()) {
                guard clock.now() < end else { return XCTFail("\(what): not within 60 s of clock") }
                await board.advance(by: .milliseconds(10)) { try? await Task.sleep(nanoseconds: 2_000_000) }
            }
        }
        try await advance(until: "ready") { await service.status().state == "idle" }
        let started = Task { await service.handle(ControlRequest(cmd: "record", action: "start")) }
        try await advance(until: "recording") { await service.status().state == "recording" }
        await board.advance(by: .seconds(1)) { try? await Task.sleep(nanoseconds: 2_000_000) }
        let reply = await started.value
        XCTAssertTrue(reply.ok, "\(reply)")
        XCTAssertEqual(calls.all.extensions, [], "no extension before the stop")

        service.stop()
        var code: Int32?
        let waiter = Task { await run.value }
        let end = clock.now() + .seconds(30)
        while code == nil, clock.now() < end {
            await board.advance(by: .milliseconds(10)) { try? await Task.sleep(nanoseconds: 2_000_000) }
            if calls.all.stops > 0, !(await service.status().lastFiles.isEmpty) { code = await waiter.value }
        }
        XCTAssertEqual(code, 0)
        XCTAssertEqual(calls.all.stops, 1)
        XCTAssertGreaterThanOrEqual(calls.all.extensions.count, 1, "systemd told to wait while the clip finalises")
        XCTAssertEqual(calls.all.extensions.first, .seconds(10))
        let clip = try XCTUnwrap(reply.files?.first)
        let (clean, err) = try decodesCleanly(clip)
        XCTAssertTrue(clean, err)
    }
}
