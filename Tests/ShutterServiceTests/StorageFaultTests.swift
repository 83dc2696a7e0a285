import Foundation
import XCTest
@testable import ShutterService

/// Storage faults for real, on filesystems mounted for the test (root only: CI runs as root).
final class StorageFaultTests: XCTestCase {
    private var mounts: [String] = []

    override func tearDown() {
        for m in mounts.reversed() { _ = try? runTool("umount", ["-l", m]) }
        mounts.removeAll()
    }

    private func mountTmpfs(_ dir: String, sizeMB: Int) throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let (code, _, err) = try runTool("mount", ["-t", "tmpfs", "-o", "size=\(sizeMB)m", "tmpfs", dir])
        guard code == 0 else { throw XCTSkip("cannot mount tmpfs (needs root): \(err)") }
        mounts.append(dir)
    }

    private func sha(_ path: String) throws -> String { try runTool("sha256sum", [path]).1 }

    /// Small clips and photos so a few MB of tmpfs is a realistic card.
    private let smallConfig = #"{"storage": {"minFreeMB": 1}, "video": {"maxSeconds": 5, "bitrateKbps": 1000}, "still": {"width": 1280, "height": 720}}"#

    func testAFullCardRefusesShowsTheCodeHarmsNothingAndRecoversWhenSpaceIsFreed() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to mount a small filesystem") }
        let root = try DaemonHarness.makeTempDir() + "/card"
        try mountTmpfs(root, sizeMB: 16)
        let d = try DaemonHarness(storage: root, config: smallConfig)
        try d.start()
        let (code, reply) = try d.ctl("tap")
        XCTAssertEqual(code, 0, d.log())
        let first = try XCTUnwrap((reply?["files"] as? [String])?.first)
        let before = try sha(first)
        // Fill the card, leaving less than a photo needs.
        _ = try runTool("dd", ["if=/dev/zero", "of=\(root)/filler", "bs=1M", "count=64"])
        let (full, _) = try d.ctl("tap")
        XCTAssertNotEqual(full, 0, "no photo on a full card")
        try d.waitFor("storage full state", timeout: 15) { try d.status()["state"] as? String == "storage-unavailable-3" }
        let leds = try d.status()["leds"] as? [String: [String: Any]]
        XCTAssertEqual(leds?["status"]?["pattern"] as? String, "error")
        let (hold, _) = try d.ctl("hold", "1.5")
        XCTAssertNotEqual(hold, 0, "no clip on a full card")
        XCTAssertEqual(try sha(first), before, "the photo already saved is untouched")
        XCTAssertEqual(d.files("JPG"), [first], "nothing partial was left")
        XCTAssertEqual(d.files("MP4"), [])
        XCTAssertEqual(d.process?.isRunning, true, "the service stays up")
        // Free space: captures work again without a restart.
        unlink(root + "/filler")
        try d.waitFor("recovered", timeout: 15) { try d.status()["state"] as? String == "idle" }
        let (again, r2) = try d.ctl("tap")
        XCTAssertEqual(again, 0, d.log())
        XCTAssertEqual((r2?["files"] as? [String])?.count, 1)
    }

    func testACardThatDisappearsAndReturnsAndAReadOnlyCard() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to mount a filesystem") }
        let base = try DaemonHarness.makeTempDir()
        let image = base + "/card.img"
        let root = base + "/card"
        _ = try runTool("truncate", ["-s", "64M", image])
        let (mk, _, mkErr) = try runTool("mkfs.ext4", ["-q", "-F", image])
        guard mk == 0 else { throw XCTSkip("mkfs.ext4 unavailable: \(mkErr)") }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let (m, _, mErr) = try runTool("mount", ["-o", "loop", image, root])
        guard m == 0 else { throw XCTSkip("cannot loop-mount (needs root and loop devices): \(mErr)") }
        mounts.append(root)
        let config = #"{"storage": {"minFreeMB": 1, "requireMountPoint": true}, "still": {"width": 1280, "height": 720}}"#
        let d = try DaemonHarness(storage: root, config: config)
        try d.start()
        let (c1, r1) = try d.ctl("tap")
        XCTAssertEqual(c1, 0, d.log())
        let first = try XCTUnwrap((r1?["files"] as? [String])?.first)
        let digest = try sha(first)

        // The card is pulled.
        XCTAssertEqual(try runTool("umount", [root]).0, 0)
        mounts.removeAll()
        try d.waitFor("storage missing", timeout: 15) { try d.status()["state"] as? String == "storage-unavailable-4" }
        XCTAssertNotEqual(try d.ctl("tap").0, 0, "no photo without the card")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root), [], "nothing written to the bare mount point")
        // It comes back: captures resume without a restart, the old photo intact.
        XCTAssertEqual(try runTool("mount", ["-o", "loop", image, root]).0, 0)
        mounts.append(root)
        try d.waitFor("storage back", timeout: 15) { try d.status()["state"] as? String == "idle" }
        XCTAssertEqual(try sha(first), digest)
        let (c2, r2) = try d.ctl("tap")
        XCTAssertEqual(c2, 0, d.log())
        XCTAssertTrue(((r2?["files"] as? [String])?.first ?? "").hasSuffix("SHTR0002.JPG"))

        // Read-only (a lock switch, or the kernel after an I/O error).
        XCTAssertEqual(try runTool("mount", ["-o", "remount,ro", root]).0, 0)
        try d.waitFor("read-only", timeout: 15) { try d.status()["state"] as? String == "storage-unavailable-4" }
        XCTAssertNotEqual(try d.ctl("tap").0, 0)
        XCTAssertEqual(try runTool("mount", ["-o", "remount,rw", root]).0, 0)
        try d.waitFor("writable again", timeout: 15) { try d.status()["state"] as? String == "idle" }
        XCTAssertEqual(try d.ctl("tap").0, 0, d.log())
        XCTAssertEqual(d.files("JPG").count, 3)
        XCTAssertEqual(try sha(first), digest, "nothing saved was lost")
        d.stop()
    }
}
