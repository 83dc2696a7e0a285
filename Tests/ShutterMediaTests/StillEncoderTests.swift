// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import XCTest
@testable import ShutterMedia

/// Encodes known patterns in every pixel format and checks the JPEG with
/// decoders that are not ours (ffprobe, ffmpeg).
final class StillEncoderTests: XCTestCase {
    // Background is mid grey; the patch is a red-orange whose YUV (JFIF) values
    // are precomputed, so a chroma/luma swap or a plane mix-up shows in the means.
    static let grey: (r: Double, g: Double, b: Double) = (128, 128, 128)
    static let patchRGB: (r: UInt8, g: UInt8, b: UInt8) = (200, 60, 40)
    static let patchYUV: (y: UInt8, u: UInt8, v: UInt8) = (100, 94, 200)

    func testI420WithStridesDecodesToThePattern() throws {
        try checkPattern(.i420)
    }

    func testNV12WithStridesDecodesToThePattern() throws {
        try checkPattern(.nv12)
    }

    func testRGB24DecodesToThePattern() throws {
        try checkPattern(.rgb24)
    }

    func testBGR24DecodesToThePattern() throws {
        try checkPattern(.bgr24)
    }

    func testYUYVDecodesToThePattern() throws {
        try checkPattern(.yuyv)
    }

    /// NV12 goes through libjpeg's strip path, I420 through TurboJPEG: the same
    /// pixels must decode the same, at sizes with partial blocks and strips
    /// (102: luma rows padded in scratch; 74, 18: a partial last strip).
    func testNV12StripsAndI420DecodeAlikeAtAwkwardSizes() throws {
        let dir = try StillTools.tempDir(self)
        let enc = try StillEncoder()
        for (w, h) in [(102, 74), (64, 18), (330, 250)] {
            var decoded: [[UInt8]] = []
            var files: [[UInt8]] = []
            for f in [PixelFormat.i420, .nv12] {
                let path = dir + "/\(f.rawValue)-\(w)x\(h).jpg"
                let still = try enc.encode(StillPattern.scene(f, width: w, height: h), metadata: StillMetadata())
                files.append(still.jpeg)
                try still.write(to: path)
                XCTAssertEqual(try StillTools.probeSize(path), "\(w)x\(h)")
                XCTAssertEqual(try StillTools.decodeErrors(path), "")
                decoded.append(try StillTools.decodeRGB(path))
            }
            XCTAssertEqual(decoded[0].count, w * h * 3)
            XCTAssertEqual(decoded[0].count, decoded[1].count)
            let maxDiff = zip(decoded[0], decoded[1]).map { abs(Int($0) - Int($1)) }.max() ?? 255
            XCTAssertEqual(maxDiff, 0, "\(w)x\(h): NV12 (strips) and I420 (TurboJPEG) must give the same JPEG")
            XCTAssertTrue(files[0] == files[1], "\(w)x\(h): same settings, so byte-identical files")
            // And the content is really there (not two equally blank images).
            let spread = (decoded[0].max() ?? 0) - (decoded[0].min() ?? 0)
            XCTAssertGreaterThan(spread, 100)
        }
    }

    func testDefaultQualityIs93AndQualityChangesTheSize() throws {
        XCTAssertEqual(try StillEncoder().quality, 93)
        let frame = StillPattern.noise(width: 256, height: 192)
        let small = try StillEncoder(quality: 40).encode(frame, metadata: StillMetadata())
        let big = try StillEncoder(quality: 98).encode(frame, metadata: StillMetadata())
        XCTAssertLessThan(small.jpeg.count * 2, big.jpeg.count, "quality must reach the encoder")
    }

    func testOneEncoderIsReusedAcrossSizesAndFormats() throws {
        let enc = try StillEncoder()
        for (w, h, f) in [(320, 240, PixelFormat.i420), (640, 480, .nv12), (96, 64, .rgb24), (320, 240, .i420)] {
            let frame = StillPattern.frame(f, width: w, height: h)
            let still = try enc.encode(frame, metadata: StillMetadata())
            let dir = try StillTools.tempDir(self)
            let path = dir + "/x.jpg"
            try still.write(to: path)
            XCTAssertEqual(try StillTools.probeSize(path), "\(w)x\(h)")
            XCTAssertEqual(try StillTools.decodeErrors(path), "")
        }
    }

    func testRejectsPlanesThatAreTooSmall() throws {
        let buf = OwnedFrameBuffer(capacity: 64 * 48)
        let y = FramePlane(base: UnsafeRawPointer(buf.bytes), stride: 64, length: 64 * 48)
        let short = FramePlane(base: UnsafeRawPointer(buf.bytes), stride: 32, length: 10)
        let frame = Frame(width: 64, height: 48, format: .i420, planes: [y, short, short],
                          timestamp: .milliseconds(0), sequence: 0, onRelease: { withExtendedLifetime(buf) {} })
        XCTAssertThrowsError(try StillEncoder().encode(frame, metadata: StillMetadata())) {
            XCTAssertEqual(($0 as? MediaError)?.code, .invalidFrame)
        }
        let missing = Frame(width: 64, height: 48, format: .nv12, planes: [y], timestamp: .milliseconds(0),
                            sequence: 0, onRelease: { withExtendedLifetime(buf) {} })
        XCTAssertThrowsError(try StillEncoder().encode(missing, metadata: StillMetadata())) {
            XCTAssertEqual(($0 as? MediaError)?.code, .invalidFrame)
        }
        // 4:2:0 and 4:2:2 need even sizes (TurboJPEG would read a row and column past odd ones).
        XCTAssertThrowsError(try StillEncoder().encode(StillPattern.frame(.i420, width: 63, height: 48),
                                                       metadata: StillMetadata())) {
            XCTAssertEqual(($0 as? MediaError)?.code, .invalidFrame)
        }
        XCTAssertThrowsError(try StillEncoder().encode(StillPattern.frame(.nv12, width: 64, height: 47),
                                                       metadata: StillMetadata())) {
            XCTAssertEqual(($0 as? MediaError)?.code, .invalidFrame)
        }
    }

    func testRejectsBadSettings() {
        XCTAssertThrowsError(try StillEncoder(quality: 0)) {
            XCTAssertEqual(($0 as? MediaError)?.code, .invalidSetting)
        }
        let frame = StillPattern.frame(.i420, width: 64, height: 48)
        XCTAssertThrowsError(try StillEncoder().encode(frame, metadata: StillMetadata(rotation: 90))) {
            XCTAssertEqual(($0 as? MediaError)?.code, .invalidSetting)
            XCTAssertTrue(($0 as? MediaError)?.message.contains("0 or 180") ?? false)
        }
    }

    func testJPEGStartsWithExifAndHasNoJFIFHeader() throws {
        let still = try StillEncoder().encode(StillPattern.frame(.i420, width: 64, height: 48),
                                              metadata: StillMetadata())
        XCTAssertEqual(Array(still.jpeg[0..<4]), [0xFF, 0xD8, 0xFF, 0xE1])
        XCTAssertEqual(Array(still.jpeg[6..<12]), Array("Exif\0\0".utf8))
        let len = Int(still.jpeg[4]) << 8 | Int(still.jpeg[5])
        XCTAssertEqual(len + 2, still.exifByteCount)
        XCTAssertNotEqual(Array(still.jpeg[(4 + len)..<(6 + len)]), [0xFF, 0xE0], "JFIF APP0 must be dropped")
        XCTAssertEqual(Array(still.jpeg.suffix(2)), [0xFF, 0xD9])
    }

    // MARK: -

    private func checkPattern(_ format: PixelFormat, file: StaticString = #filePath, line: UInt = #line) throws {
        let w = 320, h = 240
        let still = try StillEncoder().encode(StillPattern.frame(format, width: w, height: h),
                                              metadata: StillMetadata())
        let dir = try StillTools.tempDir(self)
        let path = dir + "/\(format.rawValue).jpg"
        try still.write(to: path)
        XCTAssertEqual(try StillTools.probeSize(path), "\(w)x\(h)", file: file, line: line)
        XCTAssertEqual(try StillTools.decodeErrors(path), "", file: file, line: line)
        let rgb = try StillTools.decodeRGB(path)
        XCTAssertEqual(rgb.count, w * h * 3, file: file, line: line)
        // Patch: x in [w/4, w/2), y in [h/4, h/2); means taken inside, away from edges.
        let patch = StillTools.mean(rgb, width: w, x: w / 4 + 8..<w / 2 - 8, y: h / 4 + 8..<h / 2 - 8)
        let bg = StillTools.mean(rgb, width: w, x: w / 2 + 16..<w - 8, y: h / 2 + 16..<h - 8)
        let p = Self.patchRGB
        for (got, want, name) in [(patch.r, Double(p.r), "patch R"), (patch.g, Double(p.g), "patch G"),
                                  (patch.b, Double(p.b), "patch B"), (bg.r, 128, "bg R"), (bg.g, 128, "bg G"),
                                  (bg.b, 128, "bg B")] {
            XCTAssertEqual(got, want, accuracy: 4, "\(format.rawValue) \(name)", file: file, line: line)
        }
    }
}

/// Frames with known content, in every format, with padded strides.
enum StillPattern {
    /// Grey with a red-orange patch at x in [w/4, w/2), y in [h/4, h/2). Rows are
    /// padded (stride > row bytes) to prove strides are honoured.
    static func frame(_ format: PixelFormat, width w: Int, height h: Int, pad: Int = 32) -> Frame {
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        let inPatch = { (x: Int, y: Int) in x >= w / 4 && x < w / 2 && y >= h / 4 && y < h / 2 }
        let py = StillEncoderTests.patchYUV, pr = StillEncoderTests.patchRGB
        var layout: [(stride: Int, rows: Int)]
        switch format {
        case .i420: layout = [(w + pad, h), (cw + pad, ch), (cw + pad, ch)]
        case .nv12: layout = [(w + pad, h), (2 * cw + pad, ch)]
        case .yuyv: layout = [(2 * w + pad, h)]
        case .rgb24, .bgr24: layout = [(3 * w + pad, h)]
        }
        let total = layout.reduce(0) { $0 + $1.stride * $1.rows }
        let buf = OwnedFrameBuffer(capacity: total)
        buf.bytes.initializeMemory(as: UInt8.self, repeating: 0xEE, count: total)  // padding junk
        var planes: [FramePlane] = []
        var offset = 0
        for l in layout {
            planes.append(FramePlane(base: UnsafeRawPointer(buf.bytes + offset), stride: l.stride,
                                     length: l.stride * l.rows))
            offset += l.stride * l.rows
        }
        func p(_ i: Int) -> UnsafeMutablePointer<UInt8> {
            UnsafeMutablePointer(mutating: planes[i].base.assumingMemoryBound(to: UInt8.self))
        }
        switch format {
        case .i420, .nv12:
            for y in 0..<h { for x in 0..<w { p(0)[y * planes[0].stride + x] = inPatch(x, y) ? py.y : 128 } }
            for y in 0..<ch {
                for x in 0..<cw {
                    let on = inPatch(2 * x, 2 * y)
                    if format == .i420 {
                        p(1)[y * planes[1].stride + x] = on ? py.u : 128
                        p(2)[y * planes[2].stride + x] = on ? py.v : 128
                    } else {
                        p(1)[y * planes[1].stride + 2 * x] = on ? py.u : 128
                        p(1)[y * planes[1].stride + 2 * x + 1] = on ? py.v : 128
                    }
                }
            }
        case .yuyv:
            for y in 0..<h {
                for x in 0..<w {
                    let on = inPatch(x, y)
                    p(0)[y * planes[0].stride + 2 * x] = on ? py.y : 128
                    p(0)[y * planes[0].stride + 2 * x + 1] = x % 2 == 0 ? (on ? py.u : 128) : (on ? py.v : 128)
                }
            }
        case .rgb24, .bgr24:
            for y in 0..<h {
                for x in 0..<w {
                    let o = y * planes[0].stride + 3 * x
                    let (r, g, b) = inPatch(x, y) ? pr : (128, 128, 128)
                    p(0)[o] = format == .rgb24 ? r : b
                    p(0)[o + 1] = g
                    p(0)[o + 2] = format == .rgb24 ? b : r
                }
            }
        }
        return Frame(width: w, height: h, format: format, planes: planes, timestamp: .milliseconds(0),
                     sequence: 0, onRelease: { withExtendedLifetime(buf) {} })
    }

    /// Busy content (ramps, XOR texture, chroma gradients) as I420 or NV12 with
    /// padded strides, identical pixels either way.
    static func scene(_ format: PixelFormat, width w: Int, height h: Int, pad: Int = 24) -> Frame {
        precondition(format == .i420 || format == .nv12)
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        let ys = w + pad, cs = format == .i420 ? cw + pad : 2 * cw + pad
        let chromaBytes = format == .i420 ? 2 * cs * ch : cs * ch
        let buf = OwnedFrameBuffer(capacity: ys * h + chromaBytes)
        let p = buf.bytes.assumingMemoryBound(to: UInt8.self)
        p.initialize(repeating: 0xEE, count: ys * h + chromaBytes)
        for y in 0..<h { for x in 0..<w { p[y * ys + x] = UInt8(truncatingIfNeeded: (x * 2 + y) ^ (x * y / 7)) } }
        let c = p + ys * h
        for y in 0..<ch {
            for x in 0..<cw {
                let u = UInt8(truncatingIfNeeded: 60 + x * 140 / cw), v = UInt8(truncatingIfNeeded: 200 - y * 140 / ch)
                if format == .i420 {
                    c[y * cs + x] = u
                    c[cs * ch + y * cs + x] = v
                } else {
                    c[y * cs + 2 * x] = u
                    c[y * cs + 2 * x + 1] = v
                }
            }
        }
        var planes = [FramePlane(base: UnsafeRawPointer(p), stride: ys, length: ys * h)]
        if format == .i420 {
            planes.append(FramePlane(base: UnsafeRawPointer(c), stride: cs, length: cs * ch))
            planes.append(FramePlane(base: UnsafeRawPointer(c + cs * ch), stride: cs, length: cs * ch))
        } else {
            planes.append(FramePlane(base: UnsafeRawPointer(c), stride: cs, length: cs * ch))
        }
        return Frame(width: w, height: h, format: format, planes: planes, timestamp: .milliseconds(0),
                     sequence: 0, onRelease: { withExtendedLifetime(buf) {} })
    }

    /// Tight I420 full of pseudo-random noise: JPEG cannot compress it much.
    static func noise(width w: Int, height h: Int, seed: UInt64 = 1) -> Frame {
        let buf = OwnedFrameBuffer(capacity: Frame.i420ByteCount(width: w, height: h))
        var s = seed
        let n = Frame.i420ByteCount(width: w, height: h)
        let p = buf.bytes.assumingMemoryBound(to: UInt8.self)
        for i in 0..<n {
            s = s &* 6364136223846793005 &+ 1442695040888963407
            p[i] = UInt8(truncatingIfNeeded: s >> 56)
        }
        return Frame.i420(width: w, height: h, buffer: buf, timestamp: .milliseconds(0), sequence: 0)
    }
}

/// Runs the independent decoders and parses what they say.
enum StillTools {
    /// A fresh directory, removed when `test` ends.
    static func tempDir(_ test: XCTestCase) throws -> String {
        let dir = NSTemporaryDirectory() + "still-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        return dir
    }

    @discardableResult
    static func run(_ args: [String]) throws -> (status: Int32, out: Data, err: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = args
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        // Read both pipes before waiting, so a large output cannot block the child.
        final class Box: @unchecked Sendable { var data = Data() }  // written before the group wait only
        let errBox = Box()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { errBox.data = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        let o = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        p.waitUntilExit()
        return (p.terminationStatus, o, String(decoding: errBox.data, as: UTF8.self))
    }

    /// "WxH" as ffprobe sees the first video stream.
    static func probeSize(_ path: String) throws -> String {
        let r = try run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                         "stream=width,height", "-of", "csv=p=0:s=x", path])
        return String(decoding: r.out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// ffmpeg's complaints when decoding the whole file ("" when clean).
    static func decodeErrors(_ path: String) throws -> String {
        let r = try run(["ffmpeg", "-v", "error", "-i", path, "-f", "null", "-"])
        return r.status == 0 ? r.err : "exit \(r.status): \(r.err)"
    }

    static func decodeRGB(_ path: String) throws -> [UInt8] {
        let r = try run(["ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        return [UInt8](r.out)
    }

    static func mean(_ rgb: [UInt8], width: Int, x: Range<Int>, y: Range<Int>) -> (r: Double, g: Double, b: Double) {
        var s = (0.0, 0.0, 0.0)
        for yy in y {
            for xx in x {
                let o = (yy * width + xx) * 3
                s.0 += Double(rgb[o]); s.1 += Double(rgb[o + 1]); s.2 += Double(rgb[o + 2])
            }
        }
        let n = Double(x.count * y.count)
        return (s.0 / n, s.1 / n, s.2 / n)
    }

    /// exiftool's numeric (-n) view of each file, all groups, as JSON objects.
    static func exif(_ paths: [String], extra: [String] = []) throws -> [[String: Any]] {
        let r = try run(["exiftool", "-j", "-n"] + extra + paths)
        guard r.status == 0 || !r.out.isEmpty,
              let arr = try JSONSerialization.jsonObject(with: r.out) as? [[String: Any]] else {
            throw NSError(domain: "exiftool", code: Int(r.status),
                          userInfo: [NSLocalizedDescriptionKey: "exiftool failed: \(r.err)"])
        }
        return arr
    }
}
