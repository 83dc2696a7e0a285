// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import ShutterMedia
import ShutterStorage
import XCTest

/// The time-lapse maker on JPEGs of the stills' own encoder, checked with FFmpeg's tools
/// (not with the code under test): frame count, size, rate, each frame's stamp (the photo's
/// number, so the order and every photo once), a frame against its photo (PSNR), the film a
/// regular MP4; a photo of another size scaled in; the errors; a killed run.
final class TimelapseMakerTests: XCTestCase {
    /// Photos 0..<count, each `SyntheticVideo`'s panning scene stamped with its number; the
    /// one at `bigAt` twice the size (a photo of another size in the range).
    func photos(_ dir: String, count: Int, width: Int = 640, height: Int = 360, bigAt: Int? = nil) throws -> [TimelapseMaker.Photo] {
        let small = SyntheticVideo(width: width, height: height)
        let big = SyntheticVideo(width: width * 2, height: height * 2)
        let encoder = try StillEncoder()
        return try (0..<count).map { i in
            let source = i == bigAt ? big : small
            let still = try encoder.encode(source.stampedFrame(index: i, timestamp: MonotonicTime(nanoseconds: 0)), metadata: StillMetadata())
            let name = String(format: "SHTR%04d.JPG", i + 1)
            let path = dir + "/" + name
            try still.write(to: path)
            return TimelapseMaker.Photo(path: path, name: name)
        }
    }

    /// What ffmpeg's psnr filter says of frame `n` of `film` against `photo` scaled to the film's size.
    static func psnr(_ film: String, frame n: Int, against photo: String, width: Int, height: Int) throws -> Double {
        let graph = "[0:v]select=eq(n\\,\(n)),format=yuv420p[a];[1:v]scale=\(width):\(height),format=yuv420p[b];[a][b]psnr"
        let out = try RecordingProbe.run("ffmpeg", ["-nostdin", "-hide_banner", "-i", film, "-i", photo,
                                                    "-filter_complex", graph, "-f", "null", "-"])
        guard let r = out.stderr.range(of: "average:") else {
            throw HarnessFailure("no PSNR from ffmpeg: \(out.stderr.suffix(800))")
        }
        let text = out.stderr[r.upperBound...].prefix { !$0.isWhitespace }
        return text == "inf" ? 99 : try XCTUnwrap(Double(text), String(text))
    }

    struct HarnessFailure: Error, CustomStringConvertible { let description: String; init(_ d: String) { description = d } }

    func testAFilmOfPhotosHasEveryPhotoOnceInOrderAtItsRateAndSize() throws {
        let dir = RecordingProbe.tempDir("timelapse")
        let list = try photos(dir, count: 12, bigAt: 5)
        let film = dir + "/timelapse.MP4"
        var told: [Int] = []
        let s = try TimelapseMaker.make(list, to: film, settings: TimelapseSettings(fps: 10, preset: "ultrafast"),
                                        progress: { done, of in
            XCTAssertEqual(of, 12)
            told.append(done)
        })
        XCTAssertEqual(told, Array(1...12), "progress after each photo")
        XCTAssertEqual(s.frames, 12)
        XCTAssertEqual(s.size, PixelSize(width: 640, height: 360), "the first photo's size")
        XCTAssertEqual(s.skipped, [])

        let streams = try RecordingProbe.streams(film, countFrames: true)
        XCTAssertEqual(streams.map(\.codec), ["h264"], "video only")
        XCTAssertEqual(streams.first?.frames, 12)
        XCTAssertEqual(streams.first?.width, 640)
        XCTAssertEqual(streams.first?.height, 360)
        XCTAssertEqual(try XCTUnwrap(streams.first?.duration), 1.2, accuracy: 0.05, "12 photos at 10 fps")
        let rate = try RecordingProbe.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries",
                                                      "stream=r_frame_rate,avg_frame_rate", "-of", "csv=p=0", film])
        XCTAssertEqual(String(decoding: rate.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines), "10/1,10/1")
        XCTAssertEqual(try RecordingProbe.decodeErrors(film), "")
        XCTAssertFalse(try RegularMP4.isFragmented(film), "a regular MP4, as a finished clip")
        // Each frame is its photo: the stamps in order, the photo of twice the size scaled in.
        // (The 1280x720 photo's stamp is 16 rows there, 8 once scaled: too thin to read; PSNR below.)
        var stamps = try RecordingProbe.stamps(film, width: 640, height: 360)
        XCTAssertEqual(stamps.count, 12)
        if stamps.count == 12 { stamps[5] = 5 }
        XCTAssertEqual(stamps, Array(0..<12))
        let matched = try Self.psnr(film, frame: 3, against: list[3].path, width: 640, height: 360)
        let other = try Self.psnr(film, frame: 3, against: list[4].path, width: 640, height: 360)
        XCTAssertGreaterThan(matched, 30, "frame 3 is photo 3 (PSNR \(matched) dB)")
        XCTAssertLessThan(other, matched - 6, "and not its neighbour (PSNR \(other) dB against \(matched) dB)")
        let scaled = try Self.psnr(film, frame: 5, against: list[5].path, width: 640, height: 360)
        let beside = try Self.psnr(film, frame: 5, against: list[6].path, width: 640, height: 360)
        XCTAssertGreaterThan(scaled, 28, "the 1280x720 photo scaled to 640x360 (PSNR \(scaled) dB)")
        XCTAssertLessThan(beside, scaled - 6, "frame 5 is the big photo, not the next (PSNR \(beside) dB)")
        // Nothing hidden left beside it.
        let left = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix(".") }
        XCTAssertEqual(left, [])
    }

    func testTheFilmsSizeIsTheFirstPhotosWithin1080pOrTheOneAskedFor() throws {
        let s = TimelapseSettings()
        XCTAssertEqual(s.filmSize(first: PixelSize(width: 4608, height: 2592)), PixelSize(width: 1920, height: 1080))
        XCTAssertEqual(s.filmSize(first: PixelSize(width: 3280, height: 2464)), PixelSize(width: 1436, height: 1080))
        XCTAssertEqual(s.filmSize(first: PixelSize(width: 641, height: 361)), PixelSize(width: 640, height: 360))
        var asked = s
        asked.size = PixelSize(width: 1280, height: 720)
        XCTAssertEqual(asked.filmSize(first: PixelSize(width: 4608, height: 2592)), PixelSize(width: 1280, height: 720))
        asked.size = PixelSize(width: 1281, height: 720)
        XCTAssertThrowsError(try asked.validate())
        XCTAssertThrowsError(try TimelapseSettings(fps: 0).validate())
    }

    func testNoPhotosNotEnoughSpaceAndAnUnreadablePhoto() throws {
        let dir = RecordingProbe.tempDir("timelapse-errors")
        let film = dir + "/film.MP4"
        XCTAssertThrowsError(try TimelapseMaker.make([], to: film, settings: TimelapseSettings())) { e in
            XCTAssertEqual((e as? TimelapseError)?.code, .noPhotos)
        }
        let list = try photos(dir, count: 3)
        var tight = TimelapseSettings(preset: "ultrafast")
        tight.minFreeBytes = 1 << 56
        XCTAssertThrowsError(try TimelapseMaker.make(list, to: film, settings: tight)) { e in
            XCTAssertEqual((e as? TimelapseError)?.code, .noSpace)
            XCTAssertTrue((e as? TimelapseError)?.message.contains("not enough space") == true, "\(e)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: film))
        // A photo that does not decode is left out, and said; the rest make the film.
        try Data("not a jpeg".utf8).write(to: URL(fileURLWithPath: list[1].path))
        let s = try TimelapseMaker.make(list, to: film, settings: TimelapseSettings(fps: 5, preset: "ultrafast"))
        XCTAssertEqual(s.frames, 2)
        XCTAssertEqual(s.skipped.count, 1, "\(s.skipped)")
        XCTAssertEqual(try RecordingProbe.stamps(film, width: 640, height: 360), [0, 2])
        // The name is never replaced.
        XCTAssertThrowsError(try TimelapseMaker.make(list, to: film, settings: TimelapseSettings())) { e in
            XCTAssertEqual((e as? TimelapseError)?.code, .exists)
        }
    }

    /// A card that fills up while the film is made (a 3 MB tmpfs; the photos elsewhere, the
    /// film near lossless so it outgrows the estimate the start checks): `.noSpace` in
    /// words, nothing under the film's name, no hidden file left.
    func testACardThatFillsUpWhileTheFilmIsMadeKeepsNothing() throws {
        let dir = RecordingProbe.tempDir("timelapse-photos")
        let list = try photos(dir, count: 30)
        let card = RecordingProbe.tempDir("timelapse-full")
        let mount = try RecordingProbe.run("mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", card])
        try XCTSkipUnless(mount.status == 0, "cannot mount a tmpfs here (needs root): \(mount.stderr)")
        defer { _ = try? RecordingProbe.run("umount", [card]) }
        let film = card + "/film.MP4"
        var lossless = TimelapseSettings(fps: 10, preset: "ultrafast")
        lossless.crf = 1
        XCTAssertLessThan(lossless.bytesNeeded(frames: 30, size: PixelSize(width: 640, height: 360)), 3 << 20,
                          "the estimate lets it start")
        XCTAssertThrowsError(try TimelapseMaker.make(list, to: film, settings: lossless)) { e in
            XCTAssertEqual((e as? TimelapseError)?.code, .noSpace, "\(e)")
            XCTAssertTrue((e as? TimelapseError)?.message.contains("became full") == true, "\(e)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: card), [], "nothing kept, nothing hidden")
    }

    /// The maker in its own process (shutter-media-tool), killed with SIGKILL after 4 of 10
    /// photos: no file under the film's name; the hidden part is removed by the next start,
    /// and the film is made then.
    func testAKilledRunLeavesNoFileUnderTheFilmsName() throws {
        let dir = RecordingProbe.tempDir("timelapse-kill")
        let list = try photos(dir, count: 10)
        let film = dir + "/timelapse.MP4"
        let p = Process()
        p.executableURL = RecordingProbe.productsDirectory.appendingPathComponent("shutter-media-tool")
        p.arguments = ["timelapse", "--out", film, "--preset", "ultrafast", "--stall-after", "4"] + list.map(\.path)
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = FileHandle.nullDevice
        try p.run()
        var said = ""
        while !said.contains("progress 4 10") {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            said += String(decoding: chunk, as: UTF8.self)
        }
        XCTAssertTrue(said.contains("progress 4 10"), said)
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .uncaughtSignal)
        XCTAssertFalse(FileManager.default.fileExists(atPath: film), "nothing under the film's name after the kill")
        let part = TimelapseMaker.temporaryPaths(for: film).part
        XCTAssertTrue(FileManager.default.fileExists(atPath: part), "the killed run's part is hidden beside it")
        XCTAssertEqual(TimelapseMaker.removeLeftovers(in: dir), [PlainIO.lastComponent(part)])
        let s = try TimelapseMaker.make(list, to: film, settings: TimelapseSettings(preset: "ultrafast"))
        XCTAssertEqual(s.frames, 10)
        XCTAssertEqual(try RecordingProbe.stamps(film, width: 640, height: 360), Array(0..<10))
    }
}
