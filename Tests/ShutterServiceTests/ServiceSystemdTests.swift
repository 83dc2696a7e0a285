// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterBuild
import XCTest
import ShutterCore
@testable import ShutterService

/// shutterd under a test NOTIFY_SOCKET, as systemd would run it.
final class ServiceSystemdTests: XCTestCase {
    /// A datagram listener standing in for systemd's notify socket. It keeps the messages
    /// in the order shutterd sent them (one sender, one datagram socket): a verdict reads
    /// that order, never when they came.
    final class NotifyListener: @unchecked Sendable {
        // The lock guards `messages`; the fd is read on its own thread.
        let path: String
        private let fd: Int32
        private let lock = NSLock()
        private var messages: [String] = []

        init(dir: String) throws {
            path = dir + "/notify.sock"
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var addr = sockaddr_un()
            addr.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &addr.sun_path) { raw in path.utf8.enumerated().forEach { raw[$0.offset] = $0.element } }
            let rc = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard rc == 0 else { throw HarnessError("bind notify socket failed") }
            let t = Thread { [self] in
                var buf = [UInt8](repeating: 0, count: 4096)
                while true {
                    let n = recv(fd, &buf, buf.count, 0)
                    if n <= 0 { return }
                    let text = String(decoding: buf[0..<n], as: UTF8.self)
                    lock.lock(); messages.append(text); lock.unlock()
                }
            }
            t.start()
        }

        func all() -> [String] { lock.lock(); defer { lock.unlock() }; return messages }
        func lines(containing s: String) -> [String] { all().filter { $0.contains(s) } }
        /// The index of the first message containing `s` after index `after`.
        func index(of s: String, after: Int = -1) -> Int? {
            all().enumerated().first { $0.offset > after && $0.element.contains(s) }?.offset
        }
        deinit { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
    }

    func testReadyStatusAndWatchdogPingsOnlyWhileHealthy() throws {
        let d = try DaemonHarness(config: #"{"watchdog": {"frameTimeoutMs": 400, "restartBackoffMs": 300, "maxRestarts": 50}}"#)
        let listener = try NotifyListener(dir: d.dir)
        setenv("NOTIFY_SOCKET", listener.path, 1)
        setenv("WATCHDOG_USEC", "10000000", 1)
        defer { unsetenv("NOTIFY_SOCKET"); unsetenv("WATCHDOG_USEC") }
        try d.start()
        unsetenv("NOTIFY_SOCKET")
        try d.waitFor("READY=1", timeout: 10) { !listener.lines(containing: "READY=1").isEmpty }
        XCTAssertEqual(listener.all().first, "STATUS=Shutter \(ShutterVersion.string) starting",
                       "the version in systemctl status from the start")
        let ready = listener.lines(containing: "READY=1").first!
        XCTAssertTrue(ready.contains("STATUS=ready, 0 photos, 0 clips"), ready)
        XCTAssertTrue(ready.contains("GB free"), ready)
        try d.waitFor("pings", timeout: 10) { listener.lines(containing: "WATCHDOG=1").count >= 3 }
        XCTAssertEqual(try d.ctl("tap").0, 0)
        try d.waitFor("status after a photo", timeout: 10) { !listener.lines(containing: "STATUS=ready, 1 photo,").isEmpty }

        XCTAssertEqual(try d.ctl("sim", "--fault", "stall").0, 0)
        try d.waitFor("camera-unavailable", timeout: 15) { try d.status()["state"] as? String == "camera-unavailable" }
        // The window, in the service's own words: from its first "camera stalled" STATUS (sent
        // as it stops pinging and restarts the camera) to its second (the restart found no
        // frames either). Between the two, in the order it sent them: no WATCHDOG=1.
        try d.waitFor("a second restart attempt", timeout: 30) {
            listener.index(of: "STATUS=camera stalled, restarting (attempt 2)") != nil
        }
        let all = listener.all()
        let first = try XCTUnwrap(listener.index(of: "STATUS=camera stalled, restarting (attempt 1)"), all.joined(separator: " | "))
        let second = try XCTUnwrap(listener.index(of: "STATUS=camera stalled, restarting (attempt 2)", after: first))
        let during = all[(first + 1)..<second].filter { $0.contains("WATCHDOG=1") }
        print("systemd: \(first) messages before the stall, \(second - first - 1) between its two restart attempts, "
              + "\(during.count) of them WATCHDOG=1")
        XCTAssertEqual(during.count, 0, "no WATCHDOG=1 while the camera is stalled: \(all[first...second].joined(separator: " | "))")
        XCTAssertGreaterThan(all[..<first].filter { $0.contains("WATCHDOG=1") }.count, 0, "pings before the stall")

        XCTAssertEqual(try d.ctl("sim", "--fault", "none").0, 0)
        try d.waitFor("recovered", timeout: 20) { try d.status()["state"] as? String == "idle" }
        // Pings again after the last "camera stalled" STATUS the service sent.
        try d.waitFor("pings again", timeout: 20) {
            let now = listener.all()
            guard let last = now.lastIndex(where: { $0.contains("STATUS=camera stalled") }) else { return false }
            return now[(last + 1)...].contains { $0.contains("WATCHDOG=1") }
        }
        d.signal(SIGTERM)
        XCTAssertEqual(d.waitExit(), 0)
        XCTAssertFalse(listener.lines(containing: "STOPPING=1").isEmpty)
    }
}

/// Records power-off calls and what was on the card at that moment. The lock guards all fields.
final class PowerOffLog: @unchecked Sendable {
    private let lock = NSLock()
    private var calls = 0
    private var clips: [String] = []
    private var photos = 0

    func record(_ storage: String) {
        let files = (FileManager.default.enumerator(atPath: storage + "/DCIM")?.compactMap { $0 as? String } ?? [])
        lock.lock(); defer { lock.unlock() }
        calls += 1
        clips = files.filter { $0.hasSuffix(".MP4") }.map { storage + "/DCIM/" + $0 }
        photos = files.filter { $0.hasSuffix(".JPG") }.count
    }

    var count: Int { lock.lock(); defer { lock.unlock() }; return calls }
    var clipsAtCall: [String] { lock.lock(); defer { lock.unlock() }; return clips }
    var photosAtCall: Int { lock.lock(); defer { lock.unlock() }; return photos }
}
