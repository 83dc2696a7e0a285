// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// The control socket outlives a process out of descriptors: the real shutterd under an
/// open-file limit of 48 (that it cannot raise), 40 connections that send nothing make its
/// accept fail with EMFILE; once they close, it answers again (it used to end its accept
/// thread for good: `shutterctl` hung from then on).
final class ControlSocketExhaustionTests: XCTestCase {
    func testAcceptSurvivesEMFILE() throws {
        let d = try DaemonHarness()
        d.launcher = ["/usr/bin/prlimit", "--nofile=48:48"]
        try d.start()
        defer { d.stop() }
        var held: [Int32] = []
        defer { held.forEach { close($0) } }
        for _ in 0..<40 {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            XCTAssertGreaterThanOrEqual(fd, 0)
            var addr = sockaddr_un()
            addr.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &addr.sun_path) { raw in
                for (i, b) in d.socket.utf8.enumerated() { raw[i] = b }
            }
            let rc = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            if rc != 0 { close(fd); break }  // the listen backlog is full: enough
            held.append(fd)
        }
        try d.waitFor("accept failing with EMFILE", timeout: 20) { d.log().contains("Too many open files") }
        held.forEach { close($0) }
        held = []
        let (code, reply) = try d.ctl("tap")
        XCTAssertEqual(code, 0, d.log())
        XCTAssertEqual((reply?["files"] as? [String])?.count, 1, "the tap after: \(String(describing: reply))")
        XCTAssertTrue(d.log().contains("control socket: accepting again"), d.log())
        XCTAssertEqual(d.log().components(separatedBy: "control socket: cannot accept").count, 2, "said once")
    }
}
