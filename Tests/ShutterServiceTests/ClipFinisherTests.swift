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
        let problem = try XCTUnwrap(ClipFinisher.finish(path, storage: full, log: log, reached: { _ in }), "refused")
        print("no room: \(problem)")
        XCTAssertTrue(problem.contains("SHTR0001.MP4 stays a fragmented MP4"), problem)
        XCTAssertTrue(problem.contains("finishing it needs"), problem)
        XCTAssertTrue(try RegularMP4.isFragmented(path), "left as it was")
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: path))[.size] as? Int, size)
        XCTAssertFalse(FileManager.default.fileExists(atPath: RegularMP4.temporaryPath(for: path)))

        var steps: [RegularMP4.Step] = []
        XCTAssertNil(ClipFinisher.finish(path, storage: Storage(root: root, budget: Self.budget), log: log,
                                         reached: { steps.append($0) }))
        XCTAssertFalse(try RegularMP4.isFragmented(path), "with room it is finished")
        XCTAssertEqual(steps, [.beforeRename, .afterRename], "the finish reports its steps in order (ServiceHooks.finishReached)")
    }

    /// What `shutterd --debug-stall-finish` relies on: at `beforeRename` the regular copy is
    /// beside the clip, which is still the fragmented file; at `afterRename`
    /// the clip is the regular file and no copy is left.
    func testTheFinishsStepsAreWhereTheirNamesSay() throws {
        let root = try DaemonHarness.makeTempDir()
        let path = root + "/SHTR0001.MP4"
        try record(to: path)
        let temp = RegularMP4.temporaryPath(for: path)
        var seen: [RegularMP4.Step: (clipFragmented: Bool?, copyFragmented: Bool?)] = [:]
        XCTAssertNil(ClipFinisher.finish(path, storage: Storage(root: root, budget: Self.budget), log: Log("test.finish"),
                                         reached: { step in
                                             seen[step] = (try? RegularMP4.isFragmented(path), try? RegularMP4.isFragmented(temp))
                                         }))
        XCTAssertEqual(seen[.beforeRename]?.clipFragmented, true, "before the rename the clip is the fragmented file")
        XCTAssertEqual(seen[.beforeRename]?.copyFragmented, false, "and the regular copy is beside it")
        XCTAssertEqual(seen.count, 2, "both steps reported")
        XCTAssertEqual(seen[.afterRename]?.clipFragmented, false, "after the rename the clip is the regular file")
        XCTAssertEqual(seen[.afterRename]?.copyFragmented, nil, "and no copy is left")
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
