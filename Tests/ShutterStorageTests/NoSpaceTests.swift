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

    /// malloc_trim(0) through CShutterSys, called whenever an encoder has gone: what malloc
    /// holds free goes back to the kernel (this process's resident size falls), what is in
    /// use is untouched (the heap in use is the same, a live block's bytes intact), and a
    /// call with nothing left to give back changes nothing.
    func testReleasingFreedMemoryIsSafeToCallAnyTime() throws {
        releaseFreedMemory()  // whatever earlier tests left free
        // 64 MiB in 4 KiB blocks (under mmap's threshold: malloc's own heap), written so that
        // they are resident, then freed with one live block after them, so that free() alone
        // cannot give the space back (it only shrinks the heap's top).
        let size = 4096, count = 16_384
        let blocks = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: count)
        defer { blocks.deallocate() }
        for i in 0..<count {
            blocks[i] = malloc(size)
            memset(blocks[i]!, 0xA5, size)
        }
        let live = try XCTUnwrap(malloc(size))
        defer { free(live) }
        memset(live, 0x5A, size)
        for i in 0..<count { free(blocks[i]) }
        let residentBefore = try XCTUnwrap(ProcessMemory.resident)
        let inUseBefore = try XCTUnwrap(ProcessMemory.heapInUse)

        releaseFreedMemory()
        let residentAfter = try XCTUnwrap(ProcessMemory.resident)
        let inUseAfter = try XCTUnwrap(ProcessMemory.heapInUse)
        releaseFreedMemory()  // again at once: nothing left to give back
        let residentAgain = try XCTUnwrap(ProcessMemory.resident)

        print("releaseFreedMemory: resident \(residentBefore >> 20) MiB with 64 MiB freed, \(residentAfter >> 20) MiB after, "
              + "\(residentAgain >> 20) MiB after a second call; heap in use \(inUseBefore >> 10) KiB, then \(inUseAfter >> 10) KiB")
        XCTAssertGreaterThan(residentBefore - residentAfter, 32 << 20, "the freed 64 MiB went back to the kernel")
        XCTAssertEqual(Double(inUseAfter), Double(inUseBefore), accuracy: Double(256 << 10), "what is in use stays in use")
        XCTAssertTrue(UnsafeRawBufferPointer(start: live, count: size).allSatisfy { $0 == 0x5A }, "a live block's bytes are intact")
        XCTAssertLessThan(residentAgain, residentAfter + (4 << 20), "a second call changes nothing")
    }
}
