// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import ShutterMedia
import XCTest

final class RecordingRecoveryTests: XCTestCase {
    /// A file cut anywhere in its last fragment (what a power cut or a kill mid-write leaves)
    /// makes ffmpeg report errors; after recovery it decodes cleanly and keeps all but that
    /// fragment. A whole file is left alone.
    func testACutFileIsTruncatedToItsLastWholeFragmentAndDecodesCleanly() throws {
        let dir = RecordingProbe.tempDir("recover")
        var s = RecordingSettings(preset: "ultrafast")
        s.queueFrames = 400
        let summary = try SyntheticRecording(width: 320, height: 240, frames: 150).record(s, to: dir)
        let whole = try XCTUnwrap(summary.paths.first)
        XCTAssertEqual(try FragmentedMP4Recovery.truncateToLastWholeFragment(path: whole), 0, "a finished file is whole")
        XCTAssertEqual(try RecordingProbe.decodeErrors(whole), "")
        let data = try Data(contentsOf: URL(fileURLWithPath: whole))
        // Strip the trailer (mfra), then cut at several places inside the last fragment.
        let mfra = try XCTUnwrap(data.range(of: Data("mfra".utf8), options: .backwards)).lowerBound - 4
        for cut in [300, 3_000, 9_000] {
            let path = "\(dir)/cut\(cut).mp4"
            try data.prefix(mfra - cut).write(to: URL(fileURLWithPath: path))
            XCTAssertNotEqual(try RecordingProbe.decodeErrors(path), "", "cut \(cut): the damage is visible before")
            let removed = try FragmentedMP4Recovery.truncateToLastWholeFragment(path: path)
            XCTAssertGreaterThan(removed, 0)
            XCTAssertEqual(try RecordingProbe.decodeErrors(path), "", "cut \(cut)")
            let frames = try RecordingProbe.streams(path, countFrames: true).first?.frames ?? 0
            XCTAssertGreaterThanOrEqual(frames, 150 - 2 * 30, "cut \(cut): at most the last fragment (1 s) is lost")
        }
    }
}
