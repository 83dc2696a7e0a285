// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterCore
import XCTest
@testable import ShutterStorage

/// The low-space policy with uploads on, on a tiny card (a 16 MB tmpfs): only files whose
/// copy is verified (their record says so and still names them as they are) are deleted,
/// clips before photos, oldest first; with none left, the refusal says why. And
/// `upload.keepDays` deletes by verification time only.
final class UploadSpaceTests: XCTestCase {
    var root = ""

    override func setUpWithError() throws {
        root = NSTemporaryDirectory() + "shutter-upload-space-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let (code, _, err) = try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=16m", "tmpfs", root])
        guard code == 0 else { throw XCTSkip("cannot mount a tmpfs (needs root): \(err)") }
    }

    override func tearDownWithError() throws {
        _ = try? Self.run("/bin/umount", [root])
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Writes a file of `mb` MB as DCF number `n`, and its record (verified or not).
    @discardableResult
    func file(_ n: Int, _ ext: String, mb: Int, verified: Bool?, verifiedAt: Double = 0) throws -> String {
        let number = try XCTUnwrap(DCFNumber(directory: 100, file: n))
        let dir = root + "/DCIM/" + number.directoryName
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let path = dir + "/" + number.fileName(extension: ext)
        try Data(repeating: UInt8(n), count: mb << 20).write(to: URL(fileURLWithPath: path))
        if let verified {
            let item = try XCTUnwrap(storage(.deleteUploaded).media(number))
            var r = UploadRecord(file: "DCIM/\(number.directoryName)/\(number.fileName(extension: ext))",
                                 bytes: item.bytes, modified: item.modified, state: verified ? .verified : .failed)
            r.verifiedAt = verified ? verifiedAt : nil
            try UploadRecords.write(r, root: root, number, durable: verified)
        }
        return path
    }

    func storage(_ policy: ShutterConfig.Storage.LowSpacePolicy, videoMB: UInt64 = 6) -> Storage {
        Storage(root: root, lowSpacePolicy: policy, budget: CaptureBudget(photoBytes: 4 << 20, videoBytes: videoMB << 20),
                uploadsOn: true)
    }

    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    func testOnlyVerifiedFilesGoClipsFirstAndTheRefusalSaysWhy() throws {
        let oldPhoto = try file(1, "JPG", mb: 3, verified: true)
        let unverifiedClip = try file(2, "MP4", mb: 3, verified: false)
        let verifiedClip = try file(3, "MP4", mb: 3, verified: true)
        let noRecord = try file(4, "JPG", mb: 3, verified: nil)
        // A record that no longer names the file as it is (rewritten since): not verified.
        let changed = try file(5, "MP4", mb: 2, verified: true)
        try Data(repeating: 9, count: 1 << 20).write(to: URL(fileURLWithPath: changed))
        let s = storage(.deleteUploaded)
        // 16 MB - 12 MB used: a 6 MB clip does not fit; the verified clip goes first, then the verified photo.
        let deleted = try s.ensureSpace(for: .video)
        print("upload space: deleted \(deleted.map { URL(fileURLWithPath: $0).lastPathComponent })")
        XCTAssertEqual(deleted.first, verifiedClip, "a verified clip before a verified photo")
        XCTAssertFalse(exists(verifiedClip))
        for kept in [unverifiedClip, noRecord, changed] { XCTAssertTrue(exists(kept), "\(kept) has no verified copy") }
        // A 14 MB clip: the verified photo goes too, then nothing verified is left and the refusal says so.
        XCTAssertThrowsError(try storage(.deleteUploaded, videoMB: 14).ensureSpace(for: .video)) { error in
            let text = "\(error)"
            print("upload space: \(text)")
            XCTAssertTrue(text.contains("verified copy"), text)
        }
        XCTAssertFalse(exists(oldPhoto), "the verified photo goes when still short")
        for kept in [unverifiedClip, noRecord, changed] { XCTAssertTrue(exists(kept), "\(kept) has no verified copy") }
    }

    func testDeleteOldestVideosWithUploadsOnTakesOnlyVerifiedClips() throws {
        let photo = try file(1, "JPG", mb: 4, verified: true)
        let clip = try file(2, "MP4", mb: 4, verified: false)
        let verifiedClip = try file(3, "MP4", mb: 4, verified: true)
        _ = try? storage(.deleteOldestVideos).ensureSpace(for: .video)
        XCTAssertFalse(exists(verifiedClip))
        XCTAssertTrue(exists(clip), "an unverified clip stays")
        XCTAssertTrue(exists(photo), "photos stay under delete-oldest-videos")
    }

    func testKeepDaysDeletesByVerificationTime() throws {
        let old = try file(1, "JPG", mb: 1, verified: true, verifiedAt: 1000)
        let recent = try file(2, "JPG", mb: 1, verified: true, verifiedAt: 5000)
        let waiting = try file(3, "JPG", mb: 1, verified: false)
        let s = storage(.refuse)
        let told = LockedPaths()
        s.onPolicyDeletion { paths, why in told.add(paths, why) }
        XCTAssertEqual(s.deleteUploaded(verifiedBefore: 2000), [old])
        XCTAssertTrue(exists(recent))
        XCTAssertTrue(exists(waiting))
        XCTAssertEqual(told.paths, [old])
        XCTAssertTrue(told.why.contains("upload.keepDays"), told.why)
    }

    static func run(_ tool: String, _ args: [String]) throws -> (Int32, String, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = args
        let err = Pipe()
        p.standardError = err
        p.standardOutput = Pipe()
        try p.run()
        p.waitUntilExit()
        return (p.terminationStatus, "", String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }
}

private final class LockedPaths: @unchecked Sendable {
    private let lock = NSLock()
    private var _paths: [String] = [], _why = ""
    var paths: [String] { lock.lock(); defer { lock.unlock() }; return _paths }
    var why: String { lock.lock(); defer { lock.unlock() }; return _why }
    func add(_ p: [String], _ w: String) { lock.lock(); _paths += p; _why = w; lock.unlock() }
}
