// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
@testable import ShutterService

/// ServiceHooks.systemd: each hook sends its datagram to a real listener, and the
/// power-off hook asks the PowerOff exactly once per call.
final class SystemdHooksTests: XCTestCase {
    func testHooksSendTheirNotificationsAndAskForPowerOff() async throws {
        let path = NSTemporaryDirectory() + "shutter-hooks-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let listener = try NotifyListener(sunPath: Array(path.utf8), includeTerminator: true)
        let notifier = try SystemdNotifier(address: NotifySocketAddress(path))
        let recorder = RecordingPowerOff()
        let hooks = ServiceHooks.systemd(notifier: notifier, powerOff: recorder)

        hooks.status("waiting for camera")
        hooks.ready("ready, 0 photos, 0 clips, 14.2 GB free")
        hooks.watchdogPing()
        hooks.stopping()
        for expected in ["STATUS=waiting for camera", "READY=1\nSTATUS=ready, 0 photos, 0 clips, 14.2 GB free",
                         "WATCHDOG=1", "STOPPING=1"] {
            XCTAssertEqual(listener.receive()?.text, expected)
        }
        XCTAssertNil(listener.receive(wait: false))

        XCTAssertEqual(recorder.callCount, 0)
        await hooks.powerOff()
        let called = await recorder.waitForCalls(1, timeout: .seconds(5))
        XCTAssertTrue(called)
        try await Task.sleep(for: .milliseconds(100))
        XCTAssertEqual(recorder.callCount, 1)
    }

    /// No listener (systemd gone): the hooks log and return, they do not throw or crash.
    func testHooksSurviveAMissingListener() throws {
        let notifier = try SystemdNotifier(address: NotifySocketAddress("/nonexistent/notify"))
        let hooks = ServiceHooks.systemd(notifier: notifier, powerOff: RecordingPowerOff())
        hooks.ready("ready")
        hooks.watchdogPing()
    }
}
