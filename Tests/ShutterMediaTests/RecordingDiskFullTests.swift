// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterCore
@testable import ShutterMedia
import ShutterStorage
import XCTest

final class RecordingDiskFullTests: XCTestCase {
    /// A real full file system (a 3 MB tmpfs): the clip stops with `.noSpace`, and what was
    /// written before stays a playable file.
    func testAFullDiskStopsTheClipLeavingAPlayableFileAndTheError() throws {
        let dir = RecordingProbe.tempDir("full")
        let mount = try RecordingProbe.run("mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", dir])
        try XCTSkipUnless(mount.status == 0, "cannot mount a tmpfs here (needs root): \(mount.stderr)")
        defer { _ = try? RecordingProbe.run("umount", [dir]) }
        var s = RecordingSettings(preset: "ultrafast", crf: 10)
        s.queueFrames = 2000
        // ~20 s of 640x360 at crf 10 is far more than 3 MB.
        let summary = try SyntheticRecording(width: 640, height: 360, frames: 600).record(s, to: dir)
        XCTAssertEqual(summary.error?.code, .noSpace, "\(String(describing: summary.error))")
        XCTAssertEqual(summary.error?.errno, ENOSPC)
        XCTAssertLessThan(summary.framesWritten, 600)
        let path = try XCTUnwrap(summary.paths.first)
        XCTAssertEqual(try RecordingProbe.decodeErrors(path), "")
        let streams = try RecordingProbe.streams(path, countFrames: true)
        XCTAssertEqual(streams.map(\.codec), ["h264", "aac"])
        XCTAssertGreaterThan(streams[0].duration, 1.0, "whole fragments before the disk filled are kept")
        XCTAssertGreaterThan(streams[0].frames ?? 0, 30)
    }

    /// A quota (EDQUOT) is a full card like ENOSPC: for a recording's write
    /// (`.noSpace`, which the service shows as storage full, not an encoder
    /// failure) and for a photo's.
    func testQuotaExceededIsNoSpaceForRecordingsAndPhotos() {
        let quota = SegmentFile.ioError(EDQUOT, "write", "/card/DCIM/100SHUTR/SHTR0001.MP4")
        XCTAssertEqual(quota.code, .noSpace)
        XCTAssertEqual(quota.errno, EDQUOT)
        XCTAssertTrue(quota.isNoSpace)
        XCTAssertTrue(SegmentFile.ioError(ENOSPC, "fdatasync", "/x.mp4").isNoSpace)
        XCTAssertTrue(RecordingError(.ioError, "a write failed", errno: EDQUOT).isNoSpace)
        XCTAssertFalse(SegmentFile.ioError(EIO, "write", "/x.mp4").isNoSpace)
        XCTAssertFalse(RecordingError(.encoderFailed, "the encoder failed").isNoSpace)
        let photo = MediaError.writing(SystemError(errno: EDQUOT, call: "write", path: "/x.jpg"), path: "/x.jpg")
        XCTAssertEqual(photo.code, .noSpace)
    }
}
