// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterCore
import ShutterStorage
import XCTest
@testable import ShutterMedia

/// A photo is whole under its final name, or absent with no temp litter.
final class StillWriteTests: XCTestCase {
    struct Interrupted: Error {}

    func testWrittenFileIsExactlyTheEncodedBytesAndNothingElse() throws {
        let dir = try StillTools.tempDir(self)
        let path = dir + "/SHTR0001.JPG"
        let still = try StillEncoder().encode(StillPattern.frame(.i420, width: 320, height: 240),
                                              metadata: StillMetadata())
        try still.write(to: path)
        XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), still.jpeg)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), ["SHTR0001.JPG"])
    }

    func testWriteInterruptedHalfwayLeavesNothing() throws {
        let dir = try StillTools.tempDir(self)
        let path = dir + "/SHTR0002.JPG"
        let still = try StillEncoder().encode(StillPattern.noise(width: 320, height: 240), metadata: StillMetadata())
        var written = 0
        XCTAssertThrowsError(try still.write(to: path) { fd, bytes in
            // Half the photo reaches the temp file, then the "power" goes.
            let half = UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count / 2)])
            try AtomicFile.writeAll(fd: fd, bytes: half)
            written = half.count
            throw Interrupted()
        }) { error in
            XCTAssertEqual((error as? MediaError)?.code, .writeFailed)
        }
        XCTAssertGreaterThan(written, 1000)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "no partial JPEG under the final name")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), [], "no temp file left")
    }

    func testPhotoThatDoesNotFitOnAFullDiskLeavesNothing() throws {
        guard getuid() == 0 else { throw XCTSkip("mounting a tmpfs needs root") }
        let dir = try StillTools.tempDir(self)
        guard try StillTools.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir]).status == 0 else {
            throw XCTSkip("cannot mount a tmpfs here")
        }
        defer { _ = try? StillTools.run(["umount", dir]) }
        // Noise barely compresses: ~600 KB of JPEG for a 256 KB disk.
        let still = try StillEncoder().encode(StillPattern.noise(width: 640, height: 480), metadata: StillMetadata())
        XCTAssertGreaterThan(still.jpeg.count, 300 * 1024)
        let path = dir + "/SHTR0003.JPG"
        XCTAssertThrowsError(try still.write(to: path)) { error in
            let e = error as? MediaError
            XCTAssertEqual(e?.code, .noSpace)
            XCTAssertTrue(e?.message.contains("free space") ?? false, "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), [], "no temp file left")
        // A photo that fits still goes through on the same disk afterwards.
        let small = try StillEncoder().encode(StillPattern.frame(.i420, width: 64, height: 48), metadata: StillMetadata())
        try small.write(to: path)
        XCTAssertEqual(try StillTools.decodeErrors(path), "")
    }

    func testAPhotoNeverReplacesAFileAlreadyThere() throws {
        let dir = try StillTools.tempDir(self)
        let path = dir + "/SHTR0004.JPG"
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
        let still = try StillEncoder().encode(StillPattern.frame(.i420, width: 64, height: 48), metadata: StillMetadata())
        XCTAssertThrowsError(try still.write(to: path)) {
            XCTAssertEqual(($0 as? MediaError)?.code, .writeFailed)
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), Data([1, 2, 3]), "untouched")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), ["SHTR0004.JPG"], "no temp file left")
    }

    func testWriteIntoAMissingDirectoryIsATypedError() throws {
        let still = try StillEncoder().encode(StillPattern.frame(.i420, width: 64, height: 48), metadata: StillMetadata())
        XCTAssertThrowsError(try still.write(to: "/nonexistent-\(UUID().uuidString)/x.jpg")) {
            XCTAssertEqual(($0 as? MediaError)?.code, .writeFailed)
        }
    }
}
