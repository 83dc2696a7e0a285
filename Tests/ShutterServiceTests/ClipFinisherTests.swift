// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import ShutterMedia
import ShutterStorage
import XCTest
@testable import ShutterService

/// The finish's storage guard: a card that cannot hold the finished copy keeps the clip
/// fragmented (it still plays) and says why; one that can makes it regular.
final class ClipFinisherTests: XCTestCase {
    static let budget = CaptureBudget(photoBytes: 1 << 20, videoBytes: 1 << 20)

    func testACardWithoutRoomForTheFinishKeepsTheClipFragmentedAndSaysWhy() throws {
        let root = try DaemonHarness.makeTempDir()
        let path = root + "/SHTR0001.MP4"
        try record(to: path)
        let size = (try FileManager.default.attributesOfItem(atPath: path))[.size] as! Int
        let log = Log("test.finish")

        let space = try FileSystemSpace.of(root)
        let full = Storage(root: root, minFreeBytes: space.availableBytes, budget: Self.budget)  // any copy is too much
        let problem = try XCTUnwrap(ClipFinisher.finish(path, storage: full, log: log), "refused")
        print("no room: \(problem)")
        XCTAssertTrue(problem.contains("SHTR0001.MP4 stays a fragmented MP4"), problem)
        XCTAssertTrue(problem.contains("finishing it needs"), problem)
        XCTAssertTrue(try RegularMP4.isFragmented(path), "left as it was")
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: path))[.size] as? Int, size)
        XCTAssertFalse(FileManager.default.fileExists(atPath: RegularMP4.temporaryPath(for: path)))

        XCTAssertNil(ClipFinisher.finish(path, storage: Storage(root: root, budget: Self.budget), log: log))
        XCTAssertFalse(try RegularMP4.isFragmented(path), "with room it is finished")
    }

    /// Two seconds of synthetic video, as the recorder writes a clip (fragmented).
    private func record(to path: String) throws {
        var s = RecordingSettings(preset: "ultrafast", audioChannels: 0)
        s.queueFrames = 100
        let start = MonotonicTime(nanoseconds: 5_000_000_000)
        let r = try Recorder(settings: s, start: start, nextPath: { path })
        let video = SyntheticVideo(width: 160, height: 120)
        for i in 0..<60 { r.appendWaiting(video.frame(index: i, timestamp: start + .milliseconds(Int64(i) * 33))) }
        XCTAssertEqual(r.finish().paths, [path])
        XCTAssertTrue(try RegularMP4.isFragmented(path))
    }
}
