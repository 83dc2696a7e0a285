// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import ShutterCore
import XCTest
@testable import ShutterStorage

/// A temp storage root per test; tmpfs mounts (root only) are unmounted in tearDown.
class StorageTestCase: XCTestCase {
    var root = ""
    var mounts: [String] = []

    override func setUpWithError() throws {
        root = NSTemporaryDirectory() + "shutter-storage-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        for m in mounts.reversed() { _ = try? run("/bin/umount", m) }
        try? FileManager.default.removeItem(atPath: root)
    }

    @discardableResult
    func run(_ tool: String, _ args: String...) throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = args
        try p.run()
        p.waitUntilExit()
        return p.terminationStatus
    }

    /// Mounts a tmpfs of `size` on `root` (a small disk to fill).
    func mountTmpfs(size: String, at path: String? = nil) throws {
        guard getuid() == 0 else { throw XCTSkip("mounting a tmpfs needs root") }
        let target = path ?? root
        XCTAssertEqual(try run("/bin/mount", "-t", "tmpfs", "-o", "size=\(size)", "tmpfs", target), 0)
        mounts.append(target)
    }

    func storage(policy: Storage.LowSpacePolicy = .refuse, photo: UInt64 = 1000, video: UInt64 = 1000,
                 minFree: UInt64 = 0, requireMount: Bool = false) -> Storage {
        Storage(root: root, lowSpacePolicy: policy, minFreeBytes: minFree,
                budget: CaptureBudget(photoBytes: photo, videoBytes: video), requireMountPoint: requireMount)
    }

    func relative(_ name: ReservedName) -> String { String(name.path.dropFirst(root.count + 1)) }

    func put(_ rel: String, bytes: Int = 1) throws {
        let path = root + "/" + rel
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(repeating: 7, count: bytes)))
    }

    func exists(_ rel: String) -> Bool { FileManager.default.fileExists(atPath: root + "/" + rel) }

    func counterText() throws -> String { try String(contentsOfFile: root + "/.shutter-counter", encoding: .utf8) }

    func storageError(file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) -> StorageError? {
        do { try body() } catch let e as StorageError { return e } catch { XCTFail("\(error)", file: file, line: line) }
        XCTFail("expected a StorageError", file: file, line: line)
        return nil
    }
}

final class StorageNamingTests: StorageTestCase {
    func testPhotosAndVideosShareOneDCFSequence() throws {
        let s = storage()
        let p1 = try s.savePhoto(bytes: [0xFF, 0xD8, 0xFF, 0xD9])
        let v2 = try s.reserve(.video)
        let p3 = try s.savePhoto(bytes: [1])
        XCTAssertEqual(relative(p1), "DCIM/100SHUTR/SHTR0001.JPG")
        XCTAssertEqual(relative(v2), "DCIM/100SHUTR/SHTR0002.MP4")
        XCTAssertEqual(relative(p3), "DCIM/100SHUTR/SHTR0003.JPG")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: p1.path)), Data([0xFF, 0xD8, 0xFF, 0xD9]))
        XCTAssertTrue(exists("DCIM/100SHUTR/SHTR0002.MP4"), "a video name is claimed at once (O_EXCL)")
        try s.finishVideo(v2)
        let left = try FileManager.default.contentsOfDirectory(atPath: root + "/DCIM/100SHUTR").sorted()
        XCTAssertEqual(left, ["SHTR0001.JPG", "SHTR0002.MP4", "SHTR0003.JPG"], "no temp files left")
    }

    func testCounterIsWrittenAheadOfTheNumberItHandsOut() throws {
        let name = try storage().reserve(.photo)
        XCTAssertEqual(name.number, DCFNumber(directory: 100, file: 1))
        // A crash right here (nothing written yet) must still not reuse 0001.
        XCTAssertEqual(try counterText(), "next 100SHUTR/SHTR0002\n")
        XCTAssertEqual(relative(try storage().reserve(.video)), "DCIM/100SHUTR/SHTR0002.MP4")
    }

    func testNeverReusesANumberAfterItsFileIsDeleted() throws {
        let s = storage()
        for _ in 0..<3 { _ = try s.savePhoto(bytes: [1]) }
        try FileManager.default.removeItem(atPath: root + "/DCIM/100SHUTR/SHTR0003.JPG")
        XCTAssertEqual(relative(try s.savePhoto(bytes: [2])), "DCIM/100SHUTR/SHTR0004.JPG")
        // A fresh process (new instance) with every file gone: the counter still remembers.
        try FileManager.default.removeItem(atPath: root + "/DCIM")
        XCTAssertEqual(relative(try storage().savePhoto(bytes: [3])), "DCIM/100SHUTR/SHTR0005.JPG")
    }

    func testAfterACrashTheHigherOfCounterAndFilesWins() throws {
        // Stale counter (e.g. the counter write was lost with an old backup) and files up to 0007.
        try put("DCIM/100SHUTR/SHTR0007.MP4", bytes: 10)
        try put("DCIM/100SHUTR/SHTR0003.JPG")
        try "next 100SHUTR/SHTR0002\n".write(toFile: root + "/.shutter-counter", atomically: true, encoding: .utf8)
        XCTAssertEqual(relative(try storage().reserve(.photo)), "DCIM/100SHUTR/SHTR0008.JPG")
    }

    func testMissingCounterFallsBackToTheHighestFile() throws {
        try put("DCIM/100SHUTR/SHTR0041.JPG")
        try put("DCIM/101SHUTR/SHTR0002.JPG")
        try put("DCIM/100CANON/IMG_9999.JPG")          // another camera's folder is not ours
        try put("DCIM/100SHUTR/notes.txt")
        XCTAssertEqual(relative(try storage().reserve(.video)), "DCIM/101SHUTR/SHTR0003.MP4")
    }

    func testCounterAheadOfFilesWins() throws {
        try put("DCIM/100SHUTR/SHTR0001.JPG")
        try "next 100SHUTR/SHTR0500\n".write(toFile: root + "/.shutter-counter", atomically: true, encoding: .utf8)
        XCTAssertEqual(relative(try storage().reserve(.photo)), "DCIM/100SHUTR/SHTR0500.JPG")
    }

    func testDeadWritersTempFilesAreCleanedAndTheirNumbersNotReused() throws {
        try put("DCIM/100SHUTR/SHTR0001.JPG")
        // A photo cut off before its rename by a writer that is gone (pids stop below 2^22).
        try put("DCIM/100SHUTR/.SHTR0004.JPG.tmp-99999999")
        // One of a live writer (this process's parent stands in for it).
        try put("DCIM/100SHUTR/.SHTR0005.JPG.tmp-\(getppid())")
        try put("DCIM/100SHUTR/SHTR0003.MP4", bytes: 0)    // a clip that never wrote a byte
        XCTAssertEqual(relative(try storage().reserve(.photo)), "DCIM/100SHUTR/SHTR0004.JPG")
        XCTAssertFalse(exists("DCIM/100SHUTR/.SHTR0004.JPG.tmp-99999999"))
        XCTAssertTrue(exists("DCIM/100SHUTR/.SHTR0005.JPG.tmp-\(getppid())"))
        XCTAssertTrue(exists("DCIM/100SHUTR/SHTR0003.MP4"), "a placeholder may belong to a live recorder")
        XCTAssertTrue(exists("DCIM/100SHUTR/SHTR0001.JPG"))
    }

    func testRollsOverTo101SHUTRAfter9999() throws {
        try "next 100SHUTR/SHTR9998\n".write(toFile: root + "/.shutter-counter", atomically: true, encoding: .utf8)
        let s = storage()
        XCTAssertEqual(relative(try s.savePhoto(bytes: [1])), "DCIM/100SHUTR/SHTR9998.JPG")
        XCTAssertEqual(relative(try s.reserve(.video)), "DCIM/100SHUTR/SHTR9999.MP4")
        XCTAssertEqual(relative(try s.savePhoto(bytes: [1])), "DCIM/101SHUTR/SHTR0001.JPG")
        XCTAssertEqual(try counterText(), "next 101SHUTR/SHTR0002\n")
        // Also found from the files alone.
        try FileManager.default.removeItem(atPath: root + "/.shutter-counter")
        try FileManager.default.removeItem(atPath: root + "/DCIM/101SHUTR")
        XCTAssertEqual(relative(try storage().reserve(.photo)), "DCIM/101SHUTR/SHTR0001.JPG")
    }

    func testLastNumberThenFull() throws {
        try "next 999SHUTR/SHTR9999\n".write(toFile: root + "/.shutter-counter", atomically: true, encoding: .utf8)
        let s = storage()
        XCTAssertEqual(relative(try s.reserve(.photo)), "DCIM/999SHUTR/SHTR9999.JPG")
        XCTAssertEqual(try counterText(), "next none\n")
        XCTAssertEqual(storageError { _ = try s.reserve(.photo) }?.code, .full)
        XCTAssertEqual(storageError { _ = try self.storage().reserve(.video) }?.code, .full)
    }

    func testDCFNumberArithmetic() {
        XCTAssertEqual(DCFNumber.first.description, "100SHUTR/SHTR0001")
        XCTAssertEqual(DCFNumber(directory: 100, file: 9999)?.successor, DCFNumber(directory: 101, file: 1))
        XCTAssertNil(DCFNumber(directory: 999, file: 9999)?.successor)
        XCTAssertNil(DCFNumber(directory: 100, file: 0))
        XCTAssertEqual(DCFNumber(text: "123SHUTR/SHTR0456"), DCFNumber(directory: 123, file: 456))
        XCTAssertEqual(DCFNumber.fileNumber("shtr0042.jpg")?.file, 42)
        XCTAssertNil(DCFNumber.fileNumber("SHTR42.JPG"))
        XCTAssertNil(DCFNumber.directoryNumber("099SHUTR"))
        XCTAssertEqual(DCFNumber(ordinal: DCFNumber.count - 1)?.description, "999SHUTR/SHTR9999")
    }
}

final class StoragePlacementTests: StorageTestCase {
    func testExclusiveMoveNeverReplacesAFile() throws {
        for allowRenameat2 in [true, false] {
            try put("target", bytes: 3)
            try put("incoming", bytes: 5)
            XCTAssertThrowsError(try ExclusivePlacement.move(root + "/incoming", to: root + "/target",
                                                              allowRenameat2: allowRenameat2)) { error in
                XCTAssertEqual((error as? SystemError)?.errno, EEXIST)
            }
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: root + "/target")).count, 3, "untouched")
            try ExclusivePlacement.move(root + "/incoming", to: root + "/free", allowRenameat2: allowRenameat2)
            XCTAssertFalse(exists("incoming"))
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: root + "/free")).count, 5)
            try FileManager.default.removeItem(atPath: root + "/free")
            try FileManager.default.removeItem(atPath: root + "/target")
        }
    }

    /// The counter is rewritten in place: `.replacing` swaps the whole file, never a mix.
    func testReplacingPlacementSwapsTheWholeFile() throws {
        try put("counter", bytes: 9)
        try [UInt8]([1, 2]).withUnsafeBytes { try AtomicFile.write(to: root + "/counter", placement: .replacing, bytes: $0) }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: root + "/counter")), Data([1, 2]))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root), ["counter"], "no temp file left")
    }

    func testAFailedWriteLeavesNoTempAndNoFile() throws {
        struct Interrupted: Error {}
        for placement in [AtomicFile.Placement.exclusive, .replacing] {
            XCTAssertThrowsError(try AtomicFile.write(to: root + "/photo.jpg", placement: placement) { fd in
                try [1, 2, 3].withUnsafeBytes { try AtomicFile.writeAll(fd: fd, bytes: $0) }
                throw Interrupted()
            }) { XCTAssertTrue($0 is Interrupted, "\($0)") }
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root), [])
        }
    }

    func testWriteExclusiveLeavesNoTempOnCollision() throws {
        try put("photo.jpg", bytes: 3)
        XCTAssertThrowsError(try AtomicFile.write(to: root + "/photo.jpg") { fd in
            try [1, 2].withUnsafeBytes { try AtomicFile.writeAll(fd: fd, bytes: $0) }
        }) { XCTAssertEqual(($0 as? SystemError)?.errno, EEXIST, "\($0)") }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root), ["photo.jpg"])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: root + "/photo.jpg")).count, 3, "untouched")
    }

    /// A photo written by someone else under the next name (the counter is
    /// stale): the photo is not overwritten and ours takes the next number.
    func testStaleCounterNeverClobbersAPhoto() throws {
        let s = storage()
        _ = try s.savePhoto(bytes: [1])
        try put("DCIM/100SHUTR/SHTR0002.JPG", bytes: 9)
        try put("DCIM/100SHUTR/SHTR0003.MP4", bytes: 9)
        let mine = try s.savePhoto(bytes: [1, 2])
        XCTAssertEqual(relative(mine), "DCIM/100SHUTR/SHTR0004.JPG")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: root + "/DCIM/100SHUTR/SHTR0002.JPG")).count, 9)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: root + "/DCIM/100SHUTR/SHTR0003.MP4")).count, 9)
    }

    /// Two writers (two instances, as two processes would be) saving at once:
    /// every photo lands whole under its own number.
    func testTwoWritersGetDistinctNumbers() throws {
        let a = storage(), b = storage()
        let results = Mutex<[(ReservedName, UInt8)]>([])
        DispatchQueue.concurrentPerform(iterations: 40) { i in
            let s = i % 2 == 0 ? a : b
            let byte = UInt8(i)
            let name = try! s.savePhoto(bytes: [UInt8](repeating: byte, count: 100))
            results.withLock { $0.append((name, byte)) }
        }
        let all = results.withLock { $0 }
        XCTAssertEqual(Set(all.map(\.0.number)).count, 40)
        XCTAssertEqual(all.map(\.0.number.file).sorted(), Array(1...40))
        for (name, byte) in all {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: name.path)), Data(repeating: byte, count: 100))
        }
    }
}

final class StorageSpaceTests: StorageTestCase {
    func testBudgetFromConfig() {
        var c = ShutterConfig()
        c.video.bitrateKbps = 8000
        c.audio.bitrateKbps = 128
        c.video.maxSeconds = 60
        let b = CaptureBudget(config: c)
        XCTAssertEqual(b.photoBytes, 4608 * 2592 * 3 / 4)            // 8.96 MB: twice a typical 12 MP JPEG
        XCTAssertEqual(b.videoBytes, 8128 * 125 * 60 * 105 / 100)    // 64 MB for a minute
        c.audio.enabled = false
        XCTAssertEqual(CaptureBudget(config: c).videoBytes, 8000 * 125 * 60 * 105 / 100)
        let s = Storage(config: c)
        XCTAssertEqual(s.minFreeBytes, 64 * 1_048_576)
        XCTAssertEqual(s.lowSpacePolicy, .refuse)
    }

    func testRefusePolicyOnAFullCardDeletesNothing() throws {
        try mountTmpfs(size: "2m")
        let s = storage(photo: 600_000, video: 600_000)
        XCTAssertEqual(try s.ensureSpace(for: .photo), [])
        let v = try s.reserve(.video)
        try Data(repeating: 1, count: 1_200_000).write(to: URL(fileURLWithPath: v.path))
        try s.finishVideo(v)
        _ = try s.savePhoto(bytes: [UInt8](repeating: 2, count: 300_000))
        let e = storageError { try s.ensureSpace(for: .photo) }
        XCTAssertEqual(e?.code, .full)
        XCTAssertTrue(e?.message.contains("a photo needs 0.6 MB") ?? false, e?.message ?? "")
        XCTAssertTrue(e?.message.contains("delete-oldest-videos") ?? false)
        XCTAssertTrue(exists("DCIM/100SHUTR/SHTR0001.MP4"))
        XCTAssertTrue(exists("DCIM/100SHUTR/SHTR0002.JPG"))
    }

    func testDeleteOldestVideosDeletesOnlyVideosOldestFirst() throws {
        try mountTmpfs(size: "2m")
        let s = storage(policy: .deleteOldestVideos, photo: 100_000, video: 1_000_000)
        func video(_ size: Int) throws {
            let v = try s.reserve(.video)
            try Data(repeating: 1, count: size).write(to: URL(fileURLWithPath: v.path))
            try s.finishVideo(v)
        }
        _ = try s.savePhoto(bytes: [UInt8](repeating: 2, count: 250_000))   // 0001
        try video(400_000)                                                  // 0002
        try video(400_000)                                                  // 0003
        _ = try s.savePhoto(bytes: [UInt8](repeating: 2, count: 250_000))   // 0004
        try video(400_000)                                                  // 0005
        // ~1.7 MB used of 2 MB: a 1 MB clip needs two old videos gone, not three.
        let deleted = try s.ensureSpace(for: .video).map { ($0 as NSString).lastPathComponent }
        XCTAssertEqual(deleted, ["SHTR0002.MP4", "SHTR0003.MP4"])
        XCTAssertTrue(exists("DCIM/100SHUTR/SHTR0001.JPG"))
        XCTAssertTrue(exists("DCIM/100SHUTR/SHTR0004.JPG"))
        XCTAssertTrue(exists("DCIM/100SHUTR/SHTR0005.MP4"))
        XCTAssertEqual(try s.ensureSpace(for: .video), [], "now it fits")
    }

    func testDeleteOldestVideosNeverDeletesPhotosOrTheClipBeingRecorded() throws {
        try mountTmpfs(size: "2m")
        let s = storage(policy: .deleteOldestVideos, photo: 900_000, video: 900_000)
        _ = try s.savePhoto(bytes: [UInt8](repeating: 2, count: 700_000))
        let recording = try s.reserve(.video)
        try Data(repeating: 1, count: 700_000).write(to: URL(fileURLWithPath: recording.path))
        let e = storageError { try s.ensureSpace(for: .photo) }
        XCTAssertEqual(e?.code, .full)
        XCTAssertTrue(e?.message.contains("photos are never deleted") ?? false, e?.message ?? "")
        XCTAssertTrue(exists("DCIM/100SHUTR/SHTR0001.JPG"))
        XCTAssertTrue(exists("DCIM/100SHUTR/SHTR0002.MP4"), "the clip being recorded is kept")
        // Once finished it is fair game.
        try s.finishVideo(recording)
        XCTAssertEqual(try s.ensureSpace(for: .photo).count, 1)
    }

    func testENOSPCWhileWritingAPhotoLeavesNoPartialFile() throws {
        try mountTmpfs(size: "1m")
        let s = storage()
        let e = storageError { _ = try s.savePhoto(bytes: [UInt8](repeating: 3, count: 2_000_000)) }
        XCTAssertEqual(e?.code, .full)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root + "/DCIM/100SHUTR"), [])
        // The number was spent; the next photo takes the next one.
        XCTAssertEqual(relative(try s.savePhoto(bytes: [1])), "DCIM/100SHUTR/SHTR0002.JPG")
    }
}

final class StorageHealthTests: StorageTestCase {
    func testMissingRoot() throws {
        try FileManager.default.removeItem(atPath: root)
        let s = storage()
        XCTAssertEqual(storageError { try s.checkHealth() }?.code, .missing)
        XCTAssertEqual(storageError { _ = try s.reserve(.photo) }?.code, .missing)
        XCTAssertEqual(storageError { try s.ensureSpace(for: .video) }?.code, .missing)
        XCTAssertTrue(storageError { try s.checkHealth() }?.message.contains("storage.root") ?? false)
    }

    func testRequireMountPoint() throws {
        let s = storage(requireMount: true)
        let e = storageError { try s.checkHealth() }
        XCTAssertEqual(e?.code, .missing)
        XCTAssertTrue(e?.message.contains("nothing is mounted") ?? false)
        try mountTmpfs(size: "1m")
        XCTAssertNoThrow(try s.checkHealth())
        _ = try run("/bin/umount", root)
        mounts.removeAll()
        XCTAssertEqual(storageError { try s.checkHealth() }?.code, .missing, "card pulled: unmounted again")
    }

    func testReadOnlyFileSystem() throws {
        try mountTmpfs(size: "1m")
        let s = storage()
        _ = try s.savePhoto(bytes: [1])
        XCTAssertEqual(try run("/bin/mount", "-o", "remount,ro", root), 0)
        XCTAssertEqual(storageError { try s.checkHealth() }?.code, .readOnly)
        XCTAssertEqual(storageError { _ = try s.reserve(.video) }?.code, .readOnly)
        XCTAssertEqual(storageError { _ = try s.savePhoto(bytes: [1]) }?.code, .readOnly)
        XCTAssertTrue(exists("DCIM/100SHUTR/SHTR0001.JPG"))
    }

    func testReadOnlyDirectoryWhenNotRoot() throws {
        // Root ignores directory permissions, so this only bites as another user.
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: root)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root) }
        guard geteuid() != 0 else {
            // As root, at least the classification of EACCES is checked.
            XCTAssertEqual(StorageError(SystemError(errno: EACCES, call: "open", path: root)).code, .readOnly)
            return
        }
        XCTAssertEqual(storageError { try self.storage().checkHealth() }?.code, .readOnly)
    }

    func testErrnoClassification() {
        let cases: [(Int32, StorageError.Code)] = [(ENOSPC, .full), (EDQUOT, .full), (EROFS, .readOnly),
                                                   (EACCES, .readOnly), (ENOENT, .missing), (ENODEV, .missing),
                                                   (EIO, .ioError), (EBADMSG, .ioError)]
        for (e, code) in cases {
            let err = StorageError(SystemError(errno: e, call: "write", path: "/x"))
            XCTAssertEqual(err.code, code, "errno \(e)")
            XCTAssertEqual(err.errno, e)
            XCTAssertFalse(err.message.isEmpty)
        }
    }
}
