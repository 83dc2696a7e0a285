// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterCore
import XCTest

/// The deploy files: the CI check of the unit (systemd-analyze verify + security),
/// install/uninstall into a throwaway root, and the example config against the unit.
final class SystemdDeployTests: XCTestCase {
    private let deploy = packageRoot() + "/deploy"

    /// The CI check: verify clean, exposure <= 2.5 (printed; see the test log).
    func testShippedUnitPassesTheSystemdCheck() throws {
        let run = try sh(deploy + "/systemd-check.sh")
        print(run.output)
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertTrue(run.output.contains("systemd-analyze verify shutterd.service: clean"), run.output)
        let figure = try XCTUnwrap(run.output.firstMatch(of: /exposure (\d+\.\d)/)?.1, run.output)
        XCTAssertLessThanOrEqual(try XCTUnwrap(Double(figure)), 2.5)
        // The connector (MQTT, the network shutterd has not) is held to the same check.
        let connector = try sh(deploy + "/systemd-check.sh", deploy + "/shutterd-connector.service")
        print(connector.output)
        XCTAssertEqual(connector.status, 0, connector.output)
    }

    /// The check fails a unit that lost its hardening, and a unit systemd warns about.
    func testSystemdCheckRejectsWeakAndBrokenUnits() throws {
        let dir = try temporaryDirectory()
        let unit = try String(contentsOfFile: deploy + "/shutterd.service", encoding: .utf8)
        let stripped = ["ProtectSystem=", "CapabilityBoundingSet=", "SystemCallFilter=", "PrivateNetwork=",
                        "RestrictAddressFamilies=", "User=", "DevicePolicy=", "NoNewPrivileges="]
        let weak = unit.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { line in !stripped.contains { line.hasPrefix($0) } }.joined(separator: "\n")
        try weak.write(toFile: dir + "/weak.service", atomically: true, encoding: .utf8)
        let weakRun = try sh(deploy + "/systemd-check.sh", dir + "/weak.service")
        XCTAssertEqual(weakRun.status, 1, weakRun.output)
        XCTAssertTrue(weakRun.output.contains("FAIL systemd-analyze security"), weakRun.output)

        try (unit + "\n[Service]\nWatchdogSecs=10\n").write(toFile: dir + "/typo.service", atomically: true, encoding: .utf8)
        let typoRun = try sh(deploy + "/systemd-check.sh", dir + "/typo.service")
        XCTAssertEqual(typoRun.status, 1, typoRun.output)
        XCTAssertTrue(typoRun.output.contains("FAIL systemd-analyze verify"), typoRun.output)
        XCTAssertTrue(typoRun.output.contains("WatchdogSecs"), typoRun.output)
    }

    /// The unit, the example config and the code agree on paths and on the exit code.
    func testUnitAndExampleConfigAgree() throws {
        let unit = try unitSettings()
        XCTAssertEqual(unit["Type"], ["notify"])
        XCTAssertEqual(unit["NotifyAccess"], ["main"])
        XCTAssertEqual(unit["ExecStart"], ["/usr/local/bin/shutterd --no-connector --config \(ConfigFile.defaultPath)"])
        XCTAssertEqual(unit["RestartPreventExitStatus"], ["78"])
        XCTAssertEqual(unit["Restart"], ["on-failure"])
        XCTAssertEqual(unit["User"], ["shutter"])
        XCTAssertEqual(unit["StateDirectory"], ["shutter"])
        XCTAssertEqual(unit["RuntimeDirectory"], ["shutter"])

        let config = try ConfigLoader.load(configFile: deploy + "/shutter.json.example", defaultConfigFile: nil,
                                           detectedBoard: "rpi5", boardSearchPath: [packageRoot() + "/boards"])
        // StateDirectory=shutter is /var/lib/shutter: the only writable place besides /run/shutter.
        XCTAssertEqual(config.storage.root, "/var/lib/shutter")
        XCTAssertEqual((config.control.socketPath as NSString).deletingLastPathComponent, "/run/shutter")
        // The example does not override the board's hardware (it layers above the board file).
        XCTAssertEqual(config.board.name, "rpi5")
        XCTAssertEqual(config.gpio.chipLabel, "pinctrl-rp1")
        // The in-process escalation (no pings while it runs) ends before systemd's
        // watchdog fires: frame timeout, then per restart its backoff and the
        // first-frame wait; encoder/storage: detection plus the stall give-up.
        let watchdogSec = try XCTUnwrap(unit["WatchdogSec"]?.first.flatMap { Int($0) })
        let policy = WatchdogConfiguration(frameTimeout: .milliseconds(config.watchdog.frameTimeoutMs),
                                           initialBackoff: .milliseconds(config.watchdog.restartBackoffMs),
                                           maxConsecutiveRestartFailures: config.watchdog.maxRestarts)
        var cameraEscalation = policy.frameTimeout
        for attempt in 1...max(1, policy.maxConsecutiveRestartFailures) {
            cameraEscalation += policy.backoff(attempt: attempt) + policy.firstFrameTimeout
        }
        let stallEscalation = max(policy.encoderTimeout, policy.storageTimeout) + policy.stallGiveUp
        XCTAssertLessThan(cameraEscalation, .seconds(watchdogSec), "camera restarts cut short by WatchdogSec")
        XCTAssertLessThan(stallEscalation, .seconds(watchdogSec), "stall give-up cut short by WatchdogSec")
        for board in ["rpi3", "rpi4", "rpi5", "zero2w", "sim", "qemu"] {
            XCTAssertNoThrow(try ConfigLoader.load(configFile: deploy + "/shutter.json.example", defaultConfigFile: nil,
                                                   detectedBoard: board, boardSearchPath: [packageRoot() + "/boards"]), board)
        }
    }

    /// install.sh twice (an upgrade) then uninstall.sh, into a throwaway root: the
    /// tree is complete, the second run changes nothing it must keep, and uninstall
    /// leaves exactly the photos, the config and the user.
    func testInstallTwiceThenUninstallInAThrowawayRoot() throws {
        guard geteuid() == 0 else { throw XCTSkip("install.sh needs root (it chowns to the new user)") }
        let root = try temporaryDirectory()
        try FileManager.default.createDirectory(atPath: root + "/etc", withIntermediateDirectories: true)
        for file in ["passwd", "group", "shadow", "gshadow"] where FileManager.default.fileExists(atPath: "/etc/" + file) {
            try FileManager.default.copyItem(atPath: "/etc/" + file, toPath: root + "/etc/" + file)
        }
        let binDir = try temporaryDirectory()
        try "#!/bin/sh\necho shutterd v1\n".write(toFile: binDir + "/shutterd", atomically: true, encoding: .utf8)
        try "#!/bin/sh\necho shutterctl\n".write(toFile: binDir + "/shutterctl", atomically: true, encoding: .utf8)
        chmod(binDir + "/shutterd", 0o755)
        chmod(binDir + "/shutterctl", 0o755)

        let first = try sh(deploy + "/install.sh", "--root", root, "--binary", binDir + "/shutterd")
        XCTAssertEqual(first.status, 0, first.output)

        let expectedFiles = [
            "/usr/local/bin/shutterd", "/usr/local/bin/shutterctl",
            "/usr/share/shutter/boards/rpi5.json", "/usr/share/shutter/boards/zero2w.json",
            "/etc/systemd/system/shutterd.service", "/etc/systemd/system/shutterd.socket", "/etc/sysusers.d/shutter.conf",
            "/etc/systemd/system/shutterd-connector.service", "/etc/systemd/system/shutterd-rtsp.socket",
            "/etc/udev/rules.d/60-shutter.rules", "/etc/polkit-1/rules.d/50-shutter-poweroff.rules",
            "/etc/shutter/shutter.json", "/etc/shutter/shutter.json.example",
        ]
        for file in expectedFiles {
            XCTAssertTrue(FileManager.default.fileExists(atPath: root + file), file)
        }
        XCTAssertEqual(try String(contentsOfFile: root + "/etc/systemd/system/shutterd.service", encoding: .utf8),
                       try String(contentsOfFile: deploy + "/shutterd.service", encoding: .utf8))
        // Every file the unit names as its documentation is there (`systemctl help shutterd`).
        let documentation = try XCTUnwrap(try unitSettings()["Documentation"], "the unit names no Documentation=")
        let files = documentation.flatMap { $0.split(separator: " ") }.filter { $0.hasPrefix("file:") }
        XCTAssertFalse(files.isEmpty, "no file: in Documentation=\(documentation)")
        for file in files {
            let path = String(file.dropFirst("file:".count))
            XCTAssertTrue(path.hasPrefix("/"), "\(file) is not an absolute path")
            XCTAssertTrue(FileManager.default.fileExists(atPath: root + path), "Documentation=\(file) is not installed")
        }
        let wants = root + "/etc/systemd/system/multi-user.target.wants/shutterd.service"
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: wants), "/etc/systemd/system/shutterd.service")
        // The connector is wanted by shutterd: it starts and stops with it.
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(
            atPath: root + "/etc/systemd/system/shutterd.service.wants/shutterd-connector.service"),
                       "/etc/systemd/system/shutterd-connector.service")
        // The web page's socket is installed but off: the person turns it on.
        XCTAssertFalse(FileManager.default.fileExists(atPath: root + "/etc/systemd/system/sockets.target.wants/shutterd.socket"),
                       "install.sh must not enable the web socket")

        // The user: a system account without a login shell, in the three device groups.
        let passwd = try lines(root + "/etc/passwd").filter { $0.hasPrefix("shutter:") }
        XCTAssertEqual(passwd.count, 1)
        let fields = try XCTUnwrap(passwd.first, "no shutter user").split(separator: ":", omittingEmptySubsequences: false)
        let uid = try XCTUnwrap(UInt32(fields[2]))
        XCTAssertLessThan(uid, 1000, "not a system uid")
        XCTAssertEqual(fields[6], "/usr/sbin/nologin")
        for group in ["video", "audio", "gpio"] {
            XCTAssertEqual(try groupMembers(root, group).filter { $0 == "shutter" }.count, 1, group)
        }
        let storage = try FileManager.default.attributesOfItem(atPath: root + "/var/lib/shutter")
        XCTAssertEqual((storage[.ownerAccountID] as? NSNumber)?.uint32Value, uid)
        XCTAssertEqual((storage[.posixPermissions] as? NSNumber)?.intValue, 0o750)
        let config = try FileManager.default.attributesOfItem(atPath: root + "/etc/shutter/shutter.json")
        XCTAssertEqual((config[.posixPermissions] as? NSNumber)?.intValue, 0o640)
        XCTAssertEqual((config[.groupOwnerAccountID] as? NSNumber)?.uint32Value, UInt32(fields[3]))

        // A person's config and photos, then an upgrade.
        let myConfig = "{ \"button\": { \"holdMs\": 700 } }\n"
        try myConfig.write(toFile: root + "/etc/shutter/shutter.json", atomically: false, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: root + "/var/lib/shutter/DCIM/100SHUTR", withIntermediateDirectories: true)
        try "jpeg".write(toFile: root + "/var/lib/shutter/DCIM/100SHUTR/SHTR0001.JPG", atomically: false, encoding: .utf8)
        try "#!/bin/sh\necho shutterd v2\n".write(toFile: binDir + "/shutterd", atomically: true, encoding: .utf8)
        chmod(binDir + "/shutterd", 0o755)

        let second = try sh(deploy + "/install.sh", "--root", root, "--binary", binDir + "/shutterd")
        XCTAssertEqual(second.status, 0, second.output)
        XCTAssertTrue(second.output.contains("kept the existing"), second.output)
        XCTAssertEqual(try String(contentsOfFile: root + "/etc/shutter/shutter.json", encoding: .utf8), myConfig)
        XCTAssertEqual(try String(contentsOfFile: root + "/usr/local/bin/shutterd", encoding: .utf8), "#!/bin/sh\necho shutterd v2\n")
        XCTAssertEqual(try lines(root + "/etc/passwd").filter { $0.hasPrefix("shutter:") }, passwd, "the user changed")
        for group in ["video", "audio", "gpio"] {
            XCTAssertEqual(try groupMembers(root, group).filter { $0 == "shutter" }.count, 1, group)
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: root + "/var/lib/shutter/DCIM/100SHUTR/SHTR0001.JPG"))

        let removed = try sh(deploy + "/uninstall.sh", "--root", root)
        XCTAssertEqual(removed.status, 0, removed.output)
        for file in expectedFiles where file != "/etc/shutter/shutter.json" {
            XCTAssertFalse(FileManager.default.fileExists(atPath: root + file), file)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: wants))
        XCTAssertFalse(FileManager.default.fileExists(atPath: root + "/usr/share/shutter"))
        XCTAssertEqual(try String(contentsOfFile: root + "/etc/shutter/shutter.json", encoding: .utf8), myConfig)
        XCTAssertEqual(try String(contentsOfFile: root + "/var/lib/shutter/DCIM/100SHUTR/SHTR0001.JPG", encoding: .utf8), "jpeg")
        XCTAssertEqual(try lines(root + "/etc/passwd").filter { $0.hasPrefix("shutter:") }, passwd, "the user was removed")

        let again = try sh(deploy + "/uninstall.sh", "--root", root)
        XCTAssertEqual(again.status, 0, again.output)
    }

    func testInstallRefusesAMissingBinary() throws {
        let root = try temporaryDirectory()
        let run = try sh(deploy + "/install.sh", "--root", root, "--binary", root + "/no-such-shutterd")
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.output.contains("no shutterd binary") || run.output.contains("run as root"), run.output)
        XCTAssertFalse(FileManager.default.fileExists(atPath: root + "/usr/local/bin/shutterd"))
    }

    // MARK: - Helpers

    private func unitSettings() throws -> [String: [String]] {
        var settings: [String: [String]] = [:]
        for line in try lines(deploy + "/shutterd.service") where !line.hasPrefix("#") && !line.hasPrefix("[") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            settings[String(line[..<eq]), default: []].append(String(line[line.index(after: eq)...]))
        }
        return settings
    }

    private func groupMembers(_ root: String, _ group: String) throws -> [Substring] {
        let line = try XCTUnwrap(try lines(root + "/etc/group").first { $0.hasPrefix(group + ":") }, group)
        return line.split(separator: ":", omittingEmptySubsequences: false)[3].split(separator: ",")
    }

    private func lines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    private func sh(_ arguments: String...) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    private func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "shutter-deploy-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }
}
