// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
import ShutterSim
import ShutterStorage
@testable import ShutterService

/// The service in this process, on boards built from the simulated parts.
final class ServiceInProcessTests: XCTestCase {
    /// Hooks that keep what the service told systemd.
    final class Told: @unchecked Sendable {
        // Unchecked: the lock guards `lines`.
        private let lock = NSLock()
        private var lines: [String] = []
        func add(_ s: String) { lock.lock(); lines.append(s); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
        var hooks: ServiceHooks {
            ServiceHooks(ready: { self.add("READY " + $0) }, status: { self.add("STATUS " + $0) },
                         exitWithoutWaiting: { self.add("EXIT WITHOUT WAITING \($0)") })
        }
    }

    private func config(_ edit: (inout ShutterConfig) -> Void = { _ in }) throws -> ShutterConfig {
        var c = ShutterConfig()
        c.storage.root = try DaemonHarness.makeTempDir()
        c.video.width = 320
        c.video.height = 240
        c.still.width = 640
        c.still.height = 480
        c.audio.enabled = false
        edit(&c)
        return c
    }

    /// Issue 10: on a board that is not the simulated one, `status` showed every LED off.
    func testStatusShowsTheLEDsOfABoardThatIsNotTheSimulatedOne() async throws {
        let config = try config()
        let sim = BoardRoles.simulated(config: config)
        let status = SimLED(name: "status"), flash = SimLED(name: "flash")
        // The simulated camera, but LEDs reached only as roles: the real board's path.
        let roles = BoardRoles(name: "bench", openCamera: sim.openCamera, listCameras: sim.listCameras, button: nil, microphone: nil,
                               statusLED: status, flashLED: flash, sim: nil, cameraAppliesTransform: false)
        let service = CameraService(config: config, roles: roles, hooks: Told().hooks)
        let run = Task { await service.run() }
        try await waitUntil("ready") { await service.status().state == "idle" }
        try await waitUntil("the ready LED") { status.isOn }
        let s = await service.status()
        XCTAssertEqual(s.leds["status"]?.on, true, "the status LED is steady on when ready")
        XCTAssertEqual(s.leds["status"]?.pattern, "ready")
        XCTAssertEqual(s.leds["flash"]?.on, false)
        service.stop()
        let code = await run.value
        XCTAssertEqual(code, 0)
    }

    /// Issue 10: `board.description` was never read.
    func testTheBoardDescriptionIsInTheLogAndTheFirstStatusLine() async throws {
        let config = try config { $0.board.description = "Bench rig with a sim camera" }
        let told = Told()
        let service = CameraService(config: config, roles: .simulated(config: config), hooks: told.hooks)
        let run = Task { await service.run() }
        try await waitUntil("ready") { await service.status().state == "idle" }
        XCTAssertEqual(told.all.first, "STATUS starting on sim (Bench rig with a sim camera)")
        XCTAssertTrue(told.all.contains { $0.hasPrefix("READY ready, 0 photos, 0 clips") }, "\(told.all)")
        service.stop()
        _ = await run.value
    }
}
