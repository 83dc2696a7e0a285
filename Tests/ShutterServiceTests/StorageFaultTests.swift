// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
import ShutterStorage
@testable import ShutterService

/// Storage faults for real, on filesystems mounted for the test (root only: CI runs as root),
/// under the service in this process on the manual clock (InProcessRig): the card's probe
/// runs on the clock the test moves.
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

    func testAFullCardRefusesShowsTheCodeHarmsNothingAndRecoversWhenSpaceIsFreed() async throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to mount a small filesystem") }
        let root = try DaemonHarness.makeTempDir() + "/card"
        try mountTmpfs(root, sizeMB: 16)
        let d = try await InProcessRig.start(self, json: smallConfig, root: root)
        let first = try await d.photo()
        let before = try sha(first)
        // Fill the card, leaving less than a photo needs.
        _ = try runTool("dd", ["if=/dev/zero", "of=\(root)/filler", "bs=1M", "count=64"])
        let full = try await d.ask(ControlRequest(cmd: "tap"))
        XCTAssertFalse(full.ok, "no photo on a full card")
        try await d.wait(for: "storage-unavailable-3", limit: .seconds(15))
        let leds = await d.status().leds
        XCTAssertEqual(leds["status"]?.pattern, "error")
        let hold = try await d.ask(ControlRequest(cmd: "hold", seconds: 1.5))
        XCTAssertFalse(hold.ok, "no clip on a full card")
        XCTAssertEqual(try sha(first), before, "the photo already saved is untouched")
        XCTAssertEqual(d.files("JPG"), [first], "nothing partial was left")
        XCTAssertEqual(d.files("MP4"), [])
        let up = await d.status()
        XCTAssertTrue(up.state.hasPrefix("storage-unavailable"), "the service stays up: \(up.state)")
        // Free space: captures work again without a restart.
        unlink(root + "/filler")
        try await d.wait(for: "idle", limit: .seconds(15))
        let again = try await d.ask(ControlRequest(cmd: "tap"))
        XCTAssertTrue(again.ok, "\(again)")
        XCTAssertEqual(again.files?.count, 1)
    }

    /// `delete-oldest-videos`: a photo on a full card deletes the oldest clip, and watchers
    /// are told, as for a deletion by request (`deleted` live event, `lastFiles`).
    func testALowSpaceDeletionIsAnnouncedLikeAnyOther() async throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to mount a small filesystem") }
        let root = try DaemonHarness.makeTempDir() + "/card"
        try mountTmpfs(root, sizeMB: 16)
        let json = #"{"storage": {"minFreeMB": 1, "lowSpacePolicy": "delete-oldest-videos"}, "video": {"maxSeconds": 5, "bitrateKbps": 1000}, "still": {"width": 1280, "height": 720}}"#
        let d = try await InProcessRig.start(self, json: json, root: root)
        let seen = Seen()
        let id = d.service.events.watch { seen.add($0) }
        defer { d.service.events.stopWatching(id) }
        let hold = try await d.ask(ControlRequest(cmd: "hold", seconds: 1.5))
        let clip = try XCTUnwrap(hold.files?.first, "\(hold)")
        // Fill the card to leave less than a photo needs (its budget and minFreeMB), but
        // room once the clip goes: half the clip short of it.
        let clipBytes = (try FileManager.default.attributesOfItem(atPath: clip))[.size] as! Int
        let need = Int(CaptureBudget(config: d.config).bytes(for: .photo)) + 1_048_576
        let free = try XCTUnwrap(try FileManager.default.attributesOfFileSystem(forPath: root)[.systemFreeSize] as? Int)
        _ = try runTool("dd", ["if=/dev/zero", "of=\(root)/filler", "bs=4096", "count=\((free - need + clipBytes / 2) / 4096)"])
        let photo = try await d.ask(ControlRequest(cmd: "tap"))
        XCTAssertTrue(photo.ok, "the oldest clip made room: \(photo) (clip \(clipBytes) bytes)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: clip), "the clip was deleted for the photo")
        try await d.advance(until: "the deletion reached watchers") {
            seen.all.contains { $0.type == "deleted" && $0.data["path"] == .string(clip) }
        }
        let lastFiles = await d.status().lastFiles
        XCTAssertFalse(lastFiles.contains(clip), "status no longer names it: \(lastFiles)")
    }

    func testACardThatDisappearsAndReturnsAndAReadOnlyCard() async throws {
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
        let d = try await InProcessRig.start(self, json: config, root: root)
        let first = try await d.photo()
        let digest = try sha(first)

        // The card is pulled.
        XCTAssertEqual(try runTool("umount", [root]).0, 0)
        mounts.removeAll()
        try await d.wait(for: "storage-unavailable-4", limit: .seconds(15))
        let none = try await d.ask(ControlRequest(cmd: "tap"))
        XCTAssertFalse(none.ok, "no photo without the card")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root), [], "nothing written to the bare mount point")
        // It comes back: captures resume without a restart, the old photo intact.
        XCTAssertEqual(try runTool("mount", ["-o", "loop", image, root]).0, 0)
        mounts.append(root)
        try await d.wait(for: "idle", limit: .seconds(15))
        XCTAssertEqual(try sha(first), digest)
        let second = try await d.photo()
        XCTAssertTrue(second.hasSuffix("SHTR0002.JPG"), second)

        // Read-only (a lock switch, or the kernel after an I/O error).
        XCTAssertEqual(try runTool("mount", ["-o", "remount,ro", root]).0, 0)
        try await d.wait(for: "storage-unavailable-4", limit: .seconds(15))
        let readOnly = try await d.ask(ControlRequest(cmd: "tap"))
        XCTAssertFalse(readOnly.ok)
        XCTAssertEqual(try runTool("mount", ["-o", "remount,rw", root]).0, 0)
        try await d.wait(for: "idle", limit: .seconds(15))
        _ = try await d.photo()
        XCTAssertEqual(d.files("JPG").count, 3)
        XCTAssertEqual(try sha(first), digest, "nothing saved was lost")
        let code = try await d.stop()
        XCTAssertEqual(code, 0)
    }
}

/// Live events a test watches.
private final class Seen: @unchecked Sendable {
    // Unchecked: the lock guards `events`.
    private let lock = NSLock()
    private var events: [LiveEvent] = []
    func add(_ e: LiveEvent) { lock.lock(); events.append(e); lock.unlock() }
    var all: [LiveEvent] { lock.lock(); defer { lock.unlock() }; return events }
}
