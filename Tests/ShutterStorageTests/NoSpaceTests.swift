// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterCore
import XCTest
@testable import ShutterStorage

/// One no-space classification (ENOSPC and EDQUOT) and one storage-to-capture
/// mapping, used by every path that turns a failure into "the card is full".
final class NoSpaceTests: XCTestCase {
    func testENOSPCAndEDQUOTAndNothingElseMeanNoSpace() {
        XCTAssertTrue(NoSpace.means(ENOSPC))
        XCTAssertTrue(NoSpace.means(EDQUOT))
        for e in [EIO, EROFS, EACCES, ENOENT, EFBIG, EMFILE, 0] {
            XCTAssertFalse(NoSpace.means(e), "errno \(e)")
        }
        XCTAssertFalse(NoSpace.means(nil as Int32?))
        XCTAssertTrue(NoSpace.means(Optional(EDQUOT)))
        XCTAssertTrue(SystemError(errno: EDQUOT, call: "write", path: "/x").isNoSpace)
    }

    /// A quota (EDQUOT) is a full card for the storage and for the capture it refuses.
    func testEDQUOTIsFullForStorageAndForTheCapture() {
        let storage = StorageError(SystemError(errno: EDQUOT, call: "write", path: "/card/DCIM"))
        XCTAssertEqual(storage.code, .full)
        XCTAssertEqual(CaptureError(storage).code, .storageFull)
        XCTAssertEqual(CaptureError(storage).message, storage.message)
        XCTAssertEqual(CaptureFault(storage), .storageFull)
    }

    func testStorageToCaptureMapping() {
        let cases: [(StorageError.Code, CaptureError.Code, CaptureFault)] = [
            (.full, .storageFull, .storageFull), (.missing, .storageError, .storageError),
            (.readOnly, .storageError, .storageError), (.ioError, .storageError, .storageError),
        ]
        for (code, capture, fault) in cases {
            let e = StorageError(code, "what to do")
            XCTAssertEqual(CaptureError(e), CaptureError(capture, "what to do"), "\(code)")
            XCTAssertEqual(CaptureFault(e), fault, "\(code)")
            XCTAssertEqual(CaptureError(e).latchedFault, fault, "the fault a capture latches is the probe's")
        }
    }

    func testReleasingFreedMemoryIsSafeToCallAnyTime() {
        // malloc_trim(0) through CShutterSys: nothing to observe but that it returns.
        var blocks: [UnsafeMutableRawPointer] = (0..<64).map { _ in malloc(1 << 20)! }
        for b in blocks { free(b) }
        blocks.removeAll()
        releaseFreedMemory()
        releaseFreedMemory()
    }
}
