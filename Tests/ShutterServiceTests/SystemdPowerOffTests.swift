// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import XCTest
@testable import ShutterService

/// The power-off mechanism: the real command runner (with harmless commands in place
/// of systemctl), its refusal as root, the test double, and the polkit rule's logic.
final class SystemdPowerOffTests: XCTestCase {
    /// As root, the real power-off refuses before running anything (this also keeps
    /// a test run as root from switching the machine off).
    func testRealPowerOffRefusesAsRoot() async throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root to check the root refusal") }
        let marker = NSTemporaryDirectory() + "shutter-poweroff-ran-\(getpid())"
        let guarded = SystemctlPowerOff(command: ["/bin/sh", "-c", "touch \(marker)"], environment: [], refuseRoot: true)
        do throws(PowerOffError) {
            try await guarded.powerOff()
            XCTFail("powered off as root")
        } catch {
            XCTAssertEqual(error.code, .runningAsRoot)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "the command ran")
        do throws(PowerOffError) {
            try await SystemctlPowerOff().powerOff()
            XCTFail("powered off as root")
        } catch {
            XCTAssertEqual(error.code, .runningAsRoot)
        }
    }

    func testDefaultCommandIsSystemctlPoweroffWithoutPrompts() {
        let real = SystemctlPowerOff()
        XCTAssertTrue(real.command[0].hasSuffix("/systemctl"))
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: real.command[0]), real.command[0])
        XCTAssertEqual(Array(real.command.dropFirst()), ["--no-ask-password", "poweroff"])
        XCTAssertTrue(real.environment.contains("SYSTEMD_OFFLINE=0"))
        XCTAssertTrue(real.refuseRoot)
    }

    func testAcceptedCommandReturnsAndRunsWithTheGivenEnvironment() async throws {
        let marker = NSTemporaryDirectory() + "shutter-poweroff-env-\(getpid())"
        defer { unlink(marker) }
        let runner = SystemctlPowerOff(command: ["/bin/sh", "-c", "printf %s \"$SYSTEMD_OFFLINE\" > \(marker)"],
                                       environment: ["SYSTEMD_OFFLINE=0", "PATH=/usr/bin:/bin"], refuseRoot: false)
        try await runner.powerOff()
        XCTAssertEqual(try String(contentsOfFile: marker, encoding: .utf8), "0")
    }

    func testRefusalCarriesTheCommandsOwnWords() async {
        let runner = SystemctlPowerOff(command: ["/bin/sh", "-c", "echo 'Call to PowerOff failed: Access denied' >&2; exit 1"],
                                       environment: [], refuseRoot: false)
        do throws(PowerOffError) {
            try await runner.powerOff()
            XCTFail("a failing command was taken as accepted")
        } catch {
            XCTAssertEqual(error.code, .refused)
            XCTAssertTrue(error.message.contains("Access denied"), error.message)
            XCTAssertTrue(error.message.contains("exit status 1"), error.message)
            XCTAssertTrue(error.message.contains("50-shutter-poweroff.rules"), error.message)
        }
    }

    func testKilledCommandIsARefusal() async {
        let runner = SystemctlPowerOff(command: ["/bin/sh", "-c", "kill -9 $$"], environment: [], refuseRoot: false)
        do throws(PowerOffError) {
            try await runner.powerOff()
            XCTFail("a killed command was taken as accepted")
        } catch {
            XCTAssertEqual(error.code, .refused)
            XCTAssertTrue(error.message.contains("signal 9"), error.message)
        }
    }

    func testMissingCommandIsASpawnFailure() async {
        let runner = SystemctlPowerOff(command: ["/nonexistent/systemctl", "poweroff"], environment: [], refuseRoot: false)
        do throws(PowerOffError) {
            try await runner.powerOff()
            XCTFail("a missing command was taken as accepted")
        } catch {
            XCTAssertEqual(error.code, .spawnFailed)
        }
    }

    func testRecordingPowerOffCountsCallsAndRunsTheHookAtTheCall() async throws {
        let seen = LockedCount()
        let recorder = RecordingPowerOff(onCall: { seen.increment() })
        XCTAssertEqual(recorder.callCount, 0)
        // The bound only limits a hang: the call below is what ends the wait.
        let waiter = Task { await recorder.waitForCalls(1, timeout: .seconds(60)) }
        try await recorder.powerOff()
        let arrived = await waiter.value
        XCTAssertTrue(arrived)
        XCTAssertEqual(recorder.callCount, 1)
        XCTAssertEqual(seen.value, 1)
        // A count not reached, with no time to wait: false at once, not after a sleep.
        let twoArrived = await recorder.waitForCalls(2, timeout: .zero)
        XCTAssertFalse(twoArrived)

        let refusing = RecordingPowerOff(failure: PowerOffError(.refused, "denied"))
        do throws(PowerOffError) {
            try await refusing.powerOff()
            XCTFail("the configured failure was not thrown")
        } catch {
            XCTAssertEqual(error, PowerOffError(.refused, "denied"))
        }
        XCTAssertEqual(refusing.callCount, 1)
    }

    /// The shipped polkit rule, run by node with polkit's rule API: YES for the two
    /// power-off actions and the user shutter only.
    func testPolkitRuleGrantsOnlyPowerOffToShutter() throws {
        guard let node = ["/usr/bin/node", "/usr/bin/nodejs"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("node is not installed; cannot evaluate the polkit rule")
        }
        let rule = packageRoot() + "/deploy/polkit/50-shutter-poweroff.rules"
        let script = """
            const fs = require("fs");
            const rules = [];
            const polkit = { Result: { YES: "yes", NO: "no", NOT_HANDLED: null }, addRule: (f) => rules.push(f) };
            new Function("polkit", fs.readFileSync(process.argv[1], "utf8"))(polkit);
            const cases = JSON.parse(process.argv[2]);
            const out = cases.map(([user, id]) => {
                let r = null;
                for (const f of rules) { r = f({ id: id, lookup: () => undefined }, { user: user }); if (r) break; }
                return r === undefined ? null : r;
            });
            console.log(JSON.stringify(out));
            """
        let cases: [(String, String, String?)] = [
            ("shutter", "org.freedesktop.login1.power-off", "yes"),
            ("shutter", "org.freedesktop.login1.power-off-multiple-sessions", "yes"),
            ("shutter", "org.freedesktop.login1.power-off-ignore-inhibit", nil),
            ("shutter", "org.freedesktop.login1.reboot", nil),
            ("shutter", "org.freedesktop.login1.suspend", nil),
            ("shutter", "org.freedesktop.systemd1.manage-units", nil),
            ("pi", "org.freedesktop.login1.power-off", nil),
            ("root", "org.freedesktop.login1.power-off", nil),
        ]
        let input = "[" + cases.map { "[\"\($0.0)\",\"\($0.1)\"]" }.joined(separator: ",") + "]"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: node)
        process.arguments = ["-e", script, rule, input]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let results = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [Any])
        XCTAssertEqual(results.count, cases.count)
        for (result, c) in zip(results, cases) {
            XCTAssertEqual(result as? String, c.2, "\(c.0) \(c.1)")
        }
    }
}

/// A counter the power-off hook bumps from whichever thread calls it.
private final class LockedCount: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

func packageRoot(file: String = #filePath) -> String {
    URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
}
