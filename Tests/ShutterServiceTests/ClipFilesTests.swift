// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
import Synchronization
@testable import ShutterService
@testable import ShutterStorage

/// A speculative clip's first file and the hold's rename onto its DCF name.
final class ClipFilesTests: XCTestCase {
    /// The flake StorageFaultTests once showed ("rename …SHTR0001.MP4: No such file"): the
    /// hold's commit came between the encoder naming the first file and creating it. The
    /// commit now waits until the file exists, then renames it: the clip's bytes are under
    /// its DCF name, nothing is left under the temporary one.
    func testACommitWhileTheFirstFileIsBeingCreatedRenamesItOnceItExists() throws {
        let dir = try DaemonHarness.makeTempDir()
        let storage = Storage(root: dir, budget: CaptureBudget(photoBytes: 1 << 20, videoBytes: 1 << 20))
        let files = ClipFiles(storage: storage, serial: 1)
        let committed = DispatchSemaphore(value: 0)
        let result = Mutex<Result<String, any Error>?>(nil)
        var finishedWhileCreating = false
        var temp = ""
        try files.open { path in
            temp = path
            // The hold arrives on the recorder's queue while the encoder creates the file.
            DispatchQueue.global().async {
                let r = Result { try files.commit() }
                result.withLock { $0 = r }
                committed.signal()
            }
            // It cannot finish before the file exists (it waits for the namer's lock).
            finishedWhileCreating = committed.wait(timeout: .now() + .milliseconds(300)) == .success
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("the clip".utf8)))
        }
        XCTAssertFalse(finishedWhileCreating, "the commit waited for the first file to exist")
        XCTAssertEqual(committed.wait(timeout: .now() + .seconds(30)), .success)
        let path = try XCTUnwrap(result.withLock { $0 }).get()
        XCTAssertTrue(path.hasSuffix("SHTR0001.MP4"), path)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "the clip")
        XCTAssertFalse(FileManager.default.fileExists(atPath: temp), "nothing left under the temporary name")
        XCTAssertEqual(files.finalNames([temp]), [path])
    }

    /// A first file that could not be created is not renamed by the hold: the next file
    /// the encoder opens gets the reserved name.
    func testAFirstFileNeverCreatedGivesItsNameToTheNext() throws {
        let dir = try DaemonHarness.makeTempDir()
        let storage = Storage(root: dir, budget: CaptureBudget(photoBytes: 1 << 20, videoBytes: 1 << 20))
        let files = ClipFiles(storage: storage, serial: 2)
        struct Refused: Error {}
        XCTAssertThrowsError(try files.open { _ in throw Refused() })
        let path = try files.commit()
        var opened = ""
        try files.open { p in
            opened = p
            XCTAssertTrue(FileManager.default.createFile(atPath: p, contents: Data()))
        }
        XCTAssertEqual(opened, path, "the reserved DCF name")
    }
}
