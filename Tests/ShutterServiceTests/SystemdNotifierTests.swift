// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
@testable import ShutterService

/// SystemdNotifier against a real AF_UNIX datagram socket standing in for systemd's
/// notify socket, bound both to a path and to an abstract name.
final class SystemdNotifierTests: XCTestCase {
    func testPathSocketReceivesExactlyTheDatagrams() throws {
        let dir = try temporaryDirectory()
        let path = dir + "/notify"
        let listener = try NotifyListener(sunPath: Array(path.utf8), includeTerminator: true)
        let notifier = try XCTUnwrap(SystemdNotifier.fromEnvironment(["NOTIFY_SOCKET": path]))
        XCTAssertEqual(notifier.address.kind, .path)
        try sendAll(notifier)
        try expectAll(listener)
    }

    func testAbstractSocketReceivesExactlyTheDatagrams() throws {
        let name = "shutter-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let listener = try NotifyListener(sunPath: [0] + Array(name.utf8), includeTerminator: false)
        let notifier = try XCTUnwrap(SystemdNotifier.fromEnvironment(["NOTIFY_SOCKET": "@" + name]))
        XCTAssertEqual(notifier.address.kind, .abstract)
        try sendAll(notifier)
        try expectAll(listener)
    }

    /// systemd (NotifyAccess=main) accepts a datagram only from the main PID, which it
    /// reads from the kernel-attached credentials: they must be ours, from any thread.
    func testCredentialsAreThisProcessFromAnyThread() throws {
        let dir = try temporaryDirectory()
        let listener = try NotifyListener(sunPath: Array((dir + "/n").utf8), includeTerminator: true)
        let notifier = try SystemdNotifier(address: NotifySocketAddress(dir + "/n"))
        let done = expectation(description: "sent from another thread")
        let thread = Thread {
            do { try notifier.watchdog() } catch { XCTFail("\(error)") }
            done.fulfill()
        }
        thread.start()
        wait(for: [done], timeout: 5)
        let message = try XCTUnwrap(listener.receive())
        XCTAssertEqual(message.text, "WATCHDOG=1")
        XCTAssertEqual(message.pid, getpid())
        XCTAssertEqual(message.uid, getuid())
    }

    /// A status text with a line break must not smuggle in another assignment.
    func testStatusLineBreaksCannotAddAssignments() throws {
        let dir = try temporaryDirectory()
        let listener = try NotifyListener(sunPath: Array((dir + "/n").utf8), includeTerminator: true)
        let notifier = try SystemdNotifier(address: NotifySocketAddress(dir + "/n"))
        try notifier.status("waiting for camera\nREADY=1\r\nWATCHDOG=1")
        let message = try XCTUnwrap(listener.receive())
        XCTAssertEqual(message.text, "STATUS=waiting for camera READY=1 WATCHDOG=1")
        XCTAssertEqual(message.text.split(separator: "\n").count, 1)
    }

    func testSendFailsTypedWhenNobodyListens() throws {
        let dir = try temporaryDirectory()
        let notifier = try SystemdNotifier(address: NotifySocketAddress(dir + "/absent"))
        XCTAssertThrowsError(try notifier.ready()) { error in
            let e = error as? SystemdNotifyError
            XCTAssertEqual(e?.code, .sendFailed)
            XCTAssertEqual(e?.errno, ENOENT)
        }
        // A listener that went away (systemd restarted) is a send failure too, not a crash.
        let path = dir + "/gone"
        var listener: NotifyListener? = try NotifyListener(sunPath: Array(path.utf8), includeTerminator: true)
        let toGone = try SystemdNotifier(address: NotifySocketAddress(path))
        try toGone.watchdog()
        XCTAssertEqual(listener?.receive()?.text, "WATCHDOG=1")
        listener = nil
        XCTAssertThrowsError(try toGone.watchdog()) { error in
            XCTAssertEqual((error as? SystemdNotifyError)?.code, .sendFailed)
        }
    }

    /// The listener binds names the way libsystemd's sd_notify addresses them: the
    /// real `systemd-notify` reaches it at the same path and abstract name forms.
    func testListenerAgreesWithLibsystemdAddressing() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-notify") else {
            throw XCTSkip("systemd-notify is not installed")
        }
        let dir = try temporaryDirectory()
        let name = "shutter-test-sd-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let forms: [(env: String, sunPath: [UInt8], terminator: Bool)] = [
            (dir + "/sd", Array((dir + "/sd").utf8), true),
            ("@" + name, [0] + Array(name.utf8), false),
        ]
        for form in forms {
            let listener = try NotifyListener(sunPath: form.sunPath, includeTerminator: form.terminator)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-notify")
            process.arguments = ["--no-block", "--status=from libsystemd"]  // no barrier wait
            process.environment = ["NOTIFY_SOCKET": form.env]
            try process.run()
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0, form.env)
            XCTAssertEqual(listener.receive()?.text.split(separator: "\n").first, "STATUS=from libsystemd", form.env)
        }
    }

    func testEnvironmentWithoutNotifySocketGivesNoNotifier() throws {
        XCTAssertNil(try SystemdNotifier.fromEnvironment([:]))
        XCTAssertNil(try SystemdNotifier.fromEnvironment(["NOTIFY_SOCKET": ""]))
    }

    func testMalformedAddressesAreRejected() {
        let tooLongPath = "/" + String(repeating: "a", count: 107)  // 108 bytes: no room for the NUL
        let tooLongName = "@" + String(repeating: "a", count: 108)  // 109 bytes: NUL + 108
        for text in ["run/systemd/notify", "@", "vsock:2:1234", tooLongPath, tooLongName] {
            XCTAssertThrowsError(try NotifySocketAddress(text), text) { error in
                XCTAssertEqual((error as? SystemdNotifyError)?.code, .invalidAddress, text)
            }
        }
        XCTAssertNoThrow(try NotifySocketAddress("/" + String(repeating: "a", count: 106)))
        XCTAssertNoThrow(try NotifySocketAddress("@" + String(repeating: "a", count: 107)))
    }

    func testWatchdogIntervalFromEnvironment() throws {
        let me = getpid()
        let env = ["NOTIFY_SOCKET": "/run/systemd/notify", "WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "\(me)"]
        let notifier = try XCTUnwrap(SystemdNotifier.fromEnvironment(env))
        XCTAssertEqual(notifier.watchdogTimeout, .seconds(10))
        XCTAssertEqual(notifier.watchdogInterval, .seconds(5))

        XCTAssertEqual(try SystemdWatchdogInterval.fromEnvironment(["WATCHDOG_USEC": "3000"], pid: me), .milliseconds(3))
        XCTAssertNil(try SystemdWatchdogInterval.fromEnvironment([:], pid: me))
        // Meant for another process: not ours to ping.
        XCTAssertNil(try SystemdWatchdogInterval.fromEnvironment(["WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "\(me + 1)"], pid: me))
        let noWatchdog = try XCTUnwrap(SystemdNotifier.fromEnvironment(["NOTIFY_SOCKET": "/run/systemd/notify"]))
        XCTAssertNil(noWatchdog.watchdogInterval)
        for bad in [["WATCHDOG_USEC": "0"], ["WATCHDOG_USEC": "ten"], ["WATCHDOG_USEC": "-5"],
                    ["WATCHDOG_USEC": "1000", "WATCHDOG_PID": "x"]] {
            XCTAssertThrowsError(try SystemdWatchdogInterval.fromEnvironment(bad, pid: me), "\(bad)") { error in
                XCTAssertEqual((error as? SystemdNotifyError)?.code, .invalidWatchdog)
            }
        }
    }

    // MARK: - Helpers

    private func sendAll(_ notifier: SystemdNotifier) throws {
        try notifier.status("waiting for camera")
        try notifier.ready(status: "ready, 12 photos, 3 clips, 14.2 GB free")
        try notifier.watchdog()
        try notifier.watchdog()
        try notifier.extendTimeout(usec: 20_000_000)
        try notifier.watchdogTrigger()
        try notifier.stopping(status: "finishing SHTR0004.MP4")
    }

    private func expectAll(_ listener: NotifyListener) throws {
        let expected = [
            "STATUS=waiting for camera",
            "READY=1\nSTATUS=ready, 12 photos, 3 clips, 14.2 GB free",
            "WATCHDOG=1",
            "WATCHDOG=1",
            "EXTEND_TIMEOUT_USEC=20000000",
            "WATCHDOG=trigger",
            "STOPPING=1\nSTATUS=finishing SHTR0004.MP4",
        ]
        for text in expected {
            XCTAssertEqual(listener.receive()?.text, text)
        }
        XCTAssertNil(listener.receive(wait: false), "a datagram more than sent")
    }

    private func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "shutter-notify-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }
}

/// What systemd does: a bound AF_UNIX datagram socket with SO_PASSCRED on.
final class NotifyListener {
    struct Message {
        var text: String
        var pid: pid_t
        var uid: uid_t
    }

    private let fd: Int32
    private let path: String?

    init(sunPath: [UInt8], includeTerminator: Bool) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        path = sunPath.first == 0 ? nil : String(decoding: sunPath, as: UTF8.self)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: sunPath) }
        let length = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + sunPath.count + (includeTerminator ? 1 : 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(length)) }
        }
        guard bound == 0 else {
            let e = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: e) ?? .EIO)
        }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(fd)
        if let path { unlink(path) }
    }

    /// The next datagram and its sender's credentials; nil after 5 s (or at once with wait: false).
    func receive(wait: Bool = true) -> Message? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        // Room for one SCM_CREDENTIALS control message (CMSG_SPACE is a macro).
        var control = [UInt8](repeating: 0, count: 64)
        let received: Int = buffer.withUnsafeMutableBytes { bytes in
            control.withUnsafeMutableBytes { controlBytes in
                var io = iovec(iov_base: bytes.baseAddress, iov_len: bytes.count)
                return withUnsafeMutablePointer(to: &io) { ioPointer in
                    var message = msghdr()
                    message.msg_iov = ioPointer
                    message.msg_iovlen = 1
                    message.msg_control = controlBytes.baseAddress
                    message.msg_controllen = controlBytes.count
                    let n = recvmsg(fd, &message, wait ? 0 : Int32(MSG_DONTWAIT))
                    controlLength = Int(message.msg_controllen)
                    return n
                }
            }
        }
        guard received >= 0 else { return nil }
        var pid: pid_t = 0
        var uid: uid_t = 0
        // struct cmsghdr { size_t len; int level; int type; } then struct ucred
        // { pid_t pid; uid_t uid; gid_t gid; } (ucred and SCM_CREDENTIALS = 2 are
        // behind _GNU_SOURCE, which Swift's Glibc module does not define).
        let headerSize = MemoryLayout<cmsghdr>.size
        let scmCredentials: Int32 = 2
        if controlLength >= headerSize + 12 {
            control.withUnsafeBytes { raw in
                let header = raw.loadUnaligned(as: cmsghdr.self)
                if header.cmsg_level == SOL_SOCKET && header.cmsg_type == scmCredentials {
                    pid = raw.loadUnaligned(fromByteOffset: headerSize, as: pid_t.self)
                    uid = raw.loadUnaligned(fromByteOffset: headerSize + 4, as: uid_t.self)
                }
            }
        }
        return Message(text: String(decoding: buffer[0..<received], as: UTF8.self), pid: pid, uid: uid)
    }

    private var controlLength = 0
}
