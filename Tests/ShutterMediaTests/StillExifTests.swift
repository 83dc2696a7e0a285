// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import XCTest
@testable import ShutterMedia

/// Every EXIF field, read back by exiftool (not libexif).
final class StillExifTests: XCTestCase {
    // 2026-11-30 06:10:05.045 UTC, written as local time at +01:00.
    static let when = WallTime(secondsSinceEpoch: 1_796_019_005, nanoseconds: 45_678_000,
                               utcOffsetSeconds: 3600, isTrusted: true)

    static func fullMetadata() -> StillMetadata {
        var m = StillMetadata(make: "Raspberry Pi", model: "Camera Module 3 (imx708)", software: "Shutter 0.1",
                              captureTime: when, exposureTimeMicroseconds: 10_000, analogueGain: 2.0,
                              digitalGain: 1.25, focalLengthMillimetres: 4.74, fNumber: 1.8, lensPosition: 2.0)
        m.exposureBias = -1.5
        m.autoWhiteBalance = false
        m.digitalZoomRatio = 2.5
        m.metering = .spot
        return m
    }

    func testEveryFieldIsReadBackByExiftool() throws {
        let dir = try StillTools.tempDir(self)
        let path = dir + "/full.jpg"
        try StillEncoder().encode(StillPattern.frame(.i420, width: 320, height: 240),
                                  metadata: Self.fullMetadata()).write(to: path)
        let e = try XCTUnwrap(StillTools.exif([path]).first)
        func s(_ k: String) -> String? { e[k].map { "\($0)" } }
        XCTAssertNil(e["Warning"], "exiftool found a problem: \(e["Warning"] ?? "")")
        // -validate -n: "errors warnings minor-warnings", all zero when the EXIF follows the spec.
        let v = try XCTUnwrap(StillTools.exif([path], extra: ["-validate", "-warning", "-a"]).first)
        XCTAssertEqual(v["Validate"].map { "\($0)" }, "0 0 0", "exiftool -validate: \(v["Warning"] ?? "")")
        XCTAssertEqual(s("Make"), "Raspberry Pi")
        XCTAssertEqual(s("Model"), "Camera Module 3 (imx708)")
        XCTAssertEqual(s("Software"), "Shutter 0.1")
        XCTAssertEqual(s("DateTimeOriginal"), "2026:11:30 07:10:05")
        XCTAssertEqual(s("CreateDate"), "2026:11:30 07:10:05")
        XCTAssertEqual(s("ModifyDate"), "2026:11:30 07:10:05")
        XCTAssertEqual(s("SubSecTimeOriginal"), "045")
        XCTAssertEqual(s("OffsetTimeOriginal"), "+01:00")
        XCTAssertEqual(s("OffsetTime"), "+01:00")
        XCTAssertEqual(try XCTUnwrap(e["ExposureTime"] as? Double), 0.01, accuracy: 1e-9)
        XCTAssertEqual(s("ISO"), "250")  // 100 x 2.0 x 1.25
        XCTAssertEqual(try XCTUnwrap(e["FocalLength"] as? Double), 4.74, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(e["FNumber"] as? Double), 1.8, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(e["SubjectDistance"] as? Double), 0.5, accuracy: 1e-9)  // 1 / 2 dioptres
        XCTAssertEqual(try XCTUnwrap(e["ExposureCompensation"] as? Double), -1.5, accuracy: 1e-9)
        XCTAssertEqual(s("WhiteBalance"), "1")  // manual
        XCTAssertEqual(s("MeteringMode"), "3")  // spot
        XCTAssertEqual(try XCTUnwrap(e["DigitalZoomRatio"] as? Double), 2.5, accuracy: 1e-9)
        XCTAssertEqual(s("Orientation"), "1")
        XCTAssertEqual(s("ExifImageWidth"), "320")
        XCTAssertEqual(s("ExifImageHeight"), "240")
        XCTAssertEqual(s("ImageWidth"), "320")
        XCTAssertEqual(s("ExifVersion"), "0232")
        XCTAssertEqual(s("Compression"), "6")  // IFD1: the thumbnail is a JPEG
        XCTAssertNil(e["JFIFVersion"], "no JFIF APP0 beside the EXIF APP1")

        // The thumbnail: extracted by exiftool, decoded by ffmpeg.
        let thumb = dir + "/thumb.jpg"
        let r = try StillTools.run(["exiftool", "-b", "-ThumbnailImage", path])
        XCTAssertGreaterThan(r.out.count, 500)
        try r.out.write(to: URL(fileURLWithPath: thumb))
        XCTAssertEqual(try StillTools.probeSize(thumb), "160x120")
        XCTAssertEqual(try StillTools.decodeErrors(thumb), "")
        let rgb = try StillTools.decodeRGB(thumb)
        // The thumbnail shows the same pattern: patch at [40, 80) x [30, 60).
        let patch = StillTools.mean(rgb, width: 160, x: 45..<75, y: 35..<55)
        XCTAssertEqual(patch.r, 200, accuracy: 6)
        XCTAssertEqual(patch.g, 60, accuracy: 6)
        XCTAssertEqual(patch.b, 40, accuracy: 6)
    }

    func testThumbnailKeepsTheAspectOfAWideFrameInEveryFormat() throws {
        let dir = try StillTools.tempDir(self)
        let enc = try StillEncoder()
        for f in PixelFormat.allCases {
            let path = dir + "/wide-\(f.rawValue).jpg"
            try enc.encode(StillPattern.frame(f, width: 640, height: 360), metadata: StillMetadata()).write(to: path)
            let thumb = dir + "/thumb-\(f.rawValue).jpg"
            try StillTools.run(["exiftool", "-b", "-ThumbnailImage", path]).out.write(to: URL(fileURLWithPath: thumb))
            XCTAssertEqual(try StillTools.probeSize(thumb), "160x90", f.rawValue)
            let rgb = try StillTools.decodeRGB(thumb)
            XCTAssertEqual(rgb.count, 160 * 90 * 3, f.rawValue)
            guard rgb.count == 160 * 90 * 3 else { continue }
            let patch = StillTools.mean(rgb, width: 160, x: 45..<75, y: 27..<40)
            let bg = StillTools.mean(rgb, width: 160, x: 100..<150, y: 60..<85)
            XCTAssertEqual(patch.r, 200, accuracy: 6, f.rawValue)
            XCTAssertEqual(patch.g, 60, accuracy: 6, f.rawValue)
            XCTAssertEqual(patch.b, 40, accuracy: 6, f.rawValue)
            XCTAssertEqual(bg.g, 128, accuracy: 4, f.rawValue)
        }
    }

    func testOrientationForEveryRotationAndFlip() throws {
        let dir = try StillTools.tempDir(self)
        let enc = try StillEncoder()
        let frame = StillPattern.frame(.nv12, width: 64, height: 48)
        // (rotation, hflip, vflip) -> EXIF Orientation: 180 degrees is both flips.
        let cases: [(Int, Bool, Bool, Int)] = [
            (0, false, false, 1), (0, true, false, 2), (0, true, true, 3), (0, false, true, 4),
            (180, false, false, 3), (180, true, false, 4), (180, true, true, 1), (180, false, true, 2),
        ]
        var paths: [String] = []
        for (i, c) in cases.enumerated() {
            let path = dir + "/o\(i).jpg"
            try enc.encode(frame, metadata: StillMetadata(rotation: c.0, hflip: c.1, vflip: c.2)).write(to: path)
            paths.append(path)
        }
        let all = try StillTools.exif(paths)
        XCTAssertEqual(all.count, cases.count)
        for (i, c) in cases.enumerated() {
            let got = all.first { ($0["SourceFile"] as? String) == paths[i] }?["Orientation"]
            XCTAssertEqual(got.map { "\($0)" }, "\(c.3)", "rotation \(c.0) hflip \(c.1) vflip \(c.2)")
        }
    }

    func testUntrustedOrMissingClockWritesNoDateAtAll() throws {
        let dir = try StillTools.tempDir(self)
        var untrusted = Self.fullMetadata()
        untrusted.captureTime = WallTime(secondsSinceEpoch: 12, isTrusted: false)  // 1970, fresh boot
        var missing = Self.fullMetadata()
        missing.captureTime = nil
        let a = dir + "/untrusted.jpg", b = dir + "/missing.jpg"
        let enc = try StillEncoder()
        let frame = StillPattern.frame(.i420, width: 64, height: 48)
        try enc.encode(frame, metadata: untrusted).write(to: a)
        try enc.encode(frame, metadata: missing).write(to: b)
        for e in try StillTools.exif([a, b]) {
            for key in ["DateTimeOriginal", "CreateDate", "ModifyDate", "SubSecTimeOriginal", "SubSecTimeDigitized",
                        "OffsetTime", "OffsetTimeOriginal", "OffsetTimeDigitized"] {
                XCTAssertNil(e[key], "\(e["SourceFile"] ?? ""): \(key) = \(e[key] ?? "") must be absent")
            }
            XCTAssertEqual(e["Make"].map { "\($0)" }, "Raspberry Pi", "the rest is still written")
            XCTAssertNil(e["Warning"])
        }
        // And nothing in the file spells 1970.
        XCTAssertFalse(String(decoding: try Data(contentsOf: URL(fileURLWithPath: a)), as: UTF8.self)
            .contains("1970"))
    }

    func testInfinityFocusUnknownFieldsAndNegativeOffset() throws {
        let dir = try StillTools.tempDir(self)
        let path = dir + "/inf.jpg"
        let t = WallTime(secondsSinceEpoch: 1_796_019_005, nanoseconds: 999_999_999, utcOffsetSeconds: -(4 * 3600 + 1800),
                         isTrusted: true)
        // Only lens position known (0 = infinity); no exposure, gains, focal length or f-number.
        try StillEncoder().encode(StillPattern.frame(.i420, width: 64, height: 48),
                                  metadata: StillMetadata(captureTime: t, lensPosition: 0)).write(to: path)
        let e = try XCTUnwrap(StillTools.exif([path]).first)
        XCTAssertEqual(e["SubjectDistance"].map { "\($0)" }, "4294967295")  // EXIF's infinity
        for key in ["ExposureTime", "ISO", "FocalLength", "FNumber", "ExposureCompensation", "WhiteBalance",
                    "DigitalZoomRatio", "MeteringMode"] {
            XCTAssertNil(e[key], "\(key) is unknown and must be omitted")
        }
        XCTAssertEqual(e["DateTimeOriginal"].map { "\($0)" }, "2026:11:30 01:40:05")
        XCTAssertEqual(e["SubSecTimeOriginal"].map { "\($0)" }, "999")
        XCTAssertEqual(e["OffsetTimeOriginal"].map { "\($0)" }, "-04:30")
    }

    /// EXIF MeteringMode: 1 Average, 2 CenterWeightedAverage, 3 Spot, 6 Partial (a window).
    func testMeteringMode() throws {
        let dir = try StillTools.tempDir(self)
        let expected: [(MeteringInEffect, String)] = [(.average, "1"), (.centre, "2"), (.spot, "3"), (.window, "6")]
        for (mode, value) in expected {
            let path = dir + "/\(mode.rawValue).jpg"
            var m = StillMetadata()
            m.metering = mode
            try StillEncoder().encode(StillPattern.frame(.i420, width: 64, height: 48), metadata: m).write(to: path)
            let e = try XCTUnwrap(StillTools.exif([path]).first)
            XCTAssertEqual(e["MeteringMode"].map { "\($0)" }, value, "\(mode)")
        }
    }

    func testExifDimensionsFollowTheFrame() throws {
        let dir = try StillTools.tempDir(self)
        let path = dir + "/dims.jpg"
        try StillEncoder().encode(StillPattern.frame(.yuyv, width: 96, height: 64),
                                  metadata: StillMetadata()).write(to: path)
        let e = try XCTUnwrap(StillTools.exif([path]).first)
        XCTAssertEqual(e["ExifImageWidth"].map { "\($0)" }, "96")
        XCTAssertEqual(e["ExifImageHeight"].map { "\($0)" }, "64")
        XCTAssertEqual(try StillTools.probeSize(path), "96x64")
    }
}
