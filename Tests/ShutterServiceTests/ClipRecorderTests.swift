// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
import ShutterMedia
@testable import ShutterService
@testable import ShutterStorage

/// The hold path's files, in-process with the real recorder (FFmpeg) and storage.
final class ClipRecorderTests: XCTestCase {
    private func storage() throws -> Storage {
        let dir = try DaemonHarness.makeTempDir()
        return Storage(root: dir, budget: CaptureBudget(photoBytes: 1 << 20, videoBytes: 1 << 20))
    }

    private func frames(from start: MonotonicTime, count: Int) -> [Frame] {
        (0..<count).map { i in
            let buffer = OwnedFrameBuffer(capacity: Frame.i420ByteCount(width: 320, height: 240))
            memset(buffer.bytes, Int32(i * 7 % 255), buffer.capacity)
            return Frame.i420(width: 320, height: 240, buffer: buffer,
                              timestamp: start + .milliseconds(Int64(i) * 1000 / 30), sequence: UInt64(i))
        }
    }

    private func recorder(_ storage: Storage) -> ClipRecorder {
        ClipRecorder(storage: storage, settings: RecordingSettings(preset: "ultrafast", audioChannels: 0, queueFrames: 64),
                     clock: SystemClock())
    }

    /// Issue 10: `finishVideo` was never called, so no clip recorded since the start
    /// could be deleted under `delete-oldest-videos`.
    func testAFinishedClipIsDurableAndHandedToTheLowSpacePolicy() async throws {
        let storage = try storage()
        let clips = recorder(storage)
        let start = MonotonicTime.milliseconds(10_000)
        let all = frames(from: start, count: 45)
        let stop = ClipStop()
        clips.begin(from: start, kept: Array(all.prefix(3)), withAudio: false, stop: stop)
        for f in all.dropFirst(3) { clips.offer(f) }
        let committed = await withCheckedContinuation { c in clips.commit { c.resume(returning: $0) } }
        let (path, clipStart) = try committed.get()
        XCTAssertEqual(clipStart, start)
        XCTAssertTrue(path.hasSuffix("DCIM/100SHUTR/SHTR0001.MP4"), path)
        XCTAssertEqual(storage.finishedVideosOldestFirst().map(\.path), [], "a clip being recorded is never deleted")
        stop.set(start + .milliseconds(1400))
        let outcome = await withCheckedContinuation { c in clips.finish { c.resume(returning: $0) } }
        XCTAssertEqual(outcome.paths, [path])
        XCTAssertNil(outcome.summary.error)
        XCTAssertEqual(storage.finishedVideosOldestFirst().map(\.path), [path],
                       "a finished clip is one the low-space policy may delete")
        let p = try probe(path)
        XCTAssertEqual(p.streams["video"]?.codec, "h264")
        XCTAssertEqual(p.format, 1.4, accuracy: 0.1, "frames after the stop are not recorded")
    }

    func testATapLeavesNothingAndItsNumberIsNotUsed() async throws {
        let storage = try storage()
        let clips = recorder(storage)
        let start = MonotonicTime.milliseconds(10_000)
        clips.begin(from: start, kept: [], withAudio: false, stop: ClipStop())
        for f in frames(from: start, count: 10) { clips.offer(f) }
        await withCheckedContinuation { c in clips.discard { c.resume() } }
        let left = try FileManager.default.contentsOfDirectory(atPath: storage.root).filter { !$0.hasPrefix(".shutter-counter") }
        XCTAssertEqual(left, [], "no temp file, no DCIM entry")
        XCTAssertFalse(clips.isActive)
    }
}
