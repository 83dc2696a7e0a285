// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterCore
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

        // The hook awaits the PowerOff: once it returns, every call it made has been made.
        // A second call, ordered after the first, makes exactly one more.
        XCTAssertEqual(recorder.callCount, 0)
        await hooks.powerOff()
        XCTAssertEqual(recorder.callCount, 1, "one call of the hook, one power-off")
        await hooks.powerOff()
        XCTAssertEqual(recorder.callCount, 2, "and the next call one more")
        XCTAssertNil(listener.receive(wait: false), "power-off sends nothing to systemd's socket")
    }

    /// No listener (systemd gone): each hook logs what failed (a warning naming the message)
    /// and returns; nothing is thrown, nothing crashes. A refused power-off is logged as an
    /// error and returns too (the camera stays up).
    func testHooksSurviveAMissingListener() async throws {
        let notifier = try SystemdNotifier(address: NotifySocketAddress("/nonexistent/notify"))
        let refused = RecordingPowerOff(failure: PowerOffError(.refused, "polkit said no"))
        let hooks = ServiceHooks.systemd(notifier: notifier, powerOff: refused, log: Log("test.hooks"))
        let log = try LogFile()
        defer { log.stop() }
        hooks.status("waiting for camera")
        hooks.ready("ready")
        hooks.watchdogPing()
        hooks.stopping()
        hooks.extendTimeout(.seconds(5))
        await hooks.powerOff()
        let text = log.text
        print("missing listener, the hooks' log:\n\(text)")
        for what in ["STATUS=", "READY=1", "WATCHDOG=1", "STOPPING=1", "EXTEND_TIMEOUT_USEC"] {
            XCTAssertTrue(text.contains("<4>test.hooks: \(what): "), "a failed \(what) is logged as a warning:\n\(text)")
        }
        XCTAssertEqual(refused.callCount, 1, "power-off was asked for")
        XCTAssertTrue(text.contains("<3>test.hooks: power-off refused: polkit said no"), "and its refusal logged:\n\(text)")
    }
}
