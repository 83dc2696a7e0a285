// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterCore
import Synchronization
import XCTest
@testable import ShutterStorage

/// A batch of records written durably at once: each readable after, none left as a
/// temporary file, and two syncs of the card for the batch (not two a record).
final class RecordFolderTests: XCTestCase {
    func testABatchIsWrittenWithTwoSyncs() throws {
        let root = NSTemporaryDirectory() + "shutter-records-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let syncs = Mutex<[String]>([])
        let sync = CardSync(hold: { path in syncs.withLock { $0.append(path) } })
        var batch: [(UploadRecord, DCFNumber)] = []
        for n in 1...43 {
            var r = UploadRecord(file: "DCIM/100SHUTR/SHTR\(n).JPG", bytes: UInt64(n), modified: 1)
            r.state = .verified
            batch.append((r, try XCTUnwrap(DCFNumber(directory: 100, file: n))))
        }
        try UploadRecords.writeDurably(batch, root: root, sync: sync)
        for (r, n) in batch { XCTAssertEqual(UploadRecords.read(root: root, n), r) }
        XCTAssertEqual(syncs.withLock { $0.count }, 2, "one syncfs and one fsync of the folder")
        let left = try FileManager.default.contentsOfDirectory(atPath: UploadRecords.directory(root: root))
        XCTAssertEqual(left.filter { $0.contains(".tmp-") }, [], "no temporary file left")
        XCTAssertEqual(left.count, 43)
    }
}
