import Foundation
import XCTest
@testable import ShutterService

/// The real shutterd on the simulated board, its camera settings changed only
/// through `shutterctl set`, each checked on the photo's decoded pixels and
/// its EXIF. The simulated scene: 400 lux at 5000 K, the subject at 1 dioptre;
/// colour bars above, a grey patch (lower left) and sharp stripes (lower right).
final class EndToEndCameraPhysicsTests: XCTestCase {
    /// Small stills keep the decoding quick; no mode-switch wait.
    private let config = #"{"still": {"width": 640, "height": 480}, "sim": {"modeSwitchMs": 0}}"#

    /// Sets a key through shutterctl, takes a photo with a tap, and decodes it.
    private func photo(_ d: DaemonHarness, _ settings: [(String, String)]) throws -> (Photo, String) {
        for (key, value) in settings {
            let (code, reply) = try d.ctl("set", key, value)
            XCTAssertEqual(code, 0, "set \(key) \(value): \(String(describing: reply)) \(d.log())")
        }
        let (code, reply) = try d.ctl("tap")
        XCTAssertEqual(code, 0, d.log())
        let path = try XCTUnwrap((reply?["files"] as? [String])?.first, d.log())
        return (try Photo(path, dir: d.dir), path)
    }

    /// EXIF MeteringMode is how that frame was metered: the mode the camera
    /// was given, or Partial for an exposure window it honours (a focus point).
    func testMeteringModeInTheEXIF() throws {
        let d = try DaemonHarness(config: config)
        try d.start()
        defer { d.stop() }
        func metering(_ path: String) throws -> String {
            let (_, out, _) = try runTool("exiftool", ["-s3", "-MeteringMode", path])
            return out.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        XCTAssertEqual(try metering(try photo(d, []).1), "Center-weighted average")
        XCTAssertEqual(try metering(try photo(d, [("camera.exposure.metering", "spot")]).1), "Spot")
        XCTAssertEqual(try metering(try photo(d, [("camera.exposure.metering", "average")]).1), "Average")
        XCTAssertEqual(try d.ctl("focus", "0.5", "0.5").0, 0)
        let (_, windowed) = try photo(d, [])
        XCTAssertEqual(try metering(windowed), "Partial")
        XCTAssertEqual(((try d.status()["camera"] as? [String: Any])?["frame"] as? [String: Any])?["metering"] as? String,
                       "window")
        XCTAssertEqual(try d.ctl("focus", "reset").0, 0)
        XCTAssertEqual(try metering(try photo(d, []).1), "Average")
    }

    func testEVAndAManualShutterReachThePixelsAndTheEXIF() throws {
        let d = try DaemonHarness(config: config)
        try d.start()
        defer { d.stop() }
        let (plus, plusPath) = try photo(d, [("camera.exposure.ev", "2")])
        let (minus, _) = try photo(d, [("camera.exposure.ev", "-2")])
        print("grey patch luma: EV +2 \(Int(plus.grey.luma)), EV -2 \(Int(minus.grey.luma))")
        XCTAssertGreaterThan(plus.grey.luma, minus.grey.luma + 100, "EV +2 is brighter than EV -2 by a clear margin")
        let (_, bias, _) = try runTool("exiftool", ["-s", "-ExposureCompensation", plusPath])
        XCTAssertTrue(bias.contains("ExposureCompensation            : +2"), bias)

        let (manual, path) = try photo(d, [("camera.exposure.ev", "0"), ("camera.exposure.shutterUs", "10000")])
        let (_, exif, _) = try runTool("exiftool", ["-s", "-ExposureTime", "-ISO", path])
        print("shutter 10000: \(exif.split(separator: "\n").joined(separator: "; ")), grey luma \(Int(manual.grey.luma))")
        XCTAssertTrue(exif.contains("ExposureTime                    : 1/100"), exif)
        XCTAssertTrue(exif.contains("ISO                             : 100"), exif)
        let (_, got) = try d.ctl("get", "camera.exposure.shutterUs")
        XCTAssertEqual(got?["effective"] as? Int, 10000, "the frames report it")
        XCTAssertGreaterThan(manual.grey.luma, 230, "4x the auto exposure at 400 lux: the grey patch clips")
    }

    func testDaylightAndTungstenTintTheGreyPatchInOppositeDirections() throws {
        let d = try DaemonHarness(config: config)
        try d.start()
        defer { d.stop() }
        let (auto, _) = try photo(d, [])
        let (daylight, _) = try photo(d, [("camera.whiteBalance.mode", "\"daylight\"")])
        let (tungsten, _) = try photo(d, [("camera.whiteBalance.mode", "\"tungsten\"")])
        func figure(_ p: Photo) -> String { "R \(Int(p.grey.red)) G \(Int(p.grey.green)) B \(Int(p.grey.blue))" }
        print("grey patch under 5000 K: auto \(figure(auto)), daylight \(figure(daylight)), tungsten \(figure(tungsten))")
        XCTAssertEqual(auto.grey.redMinusBlue, 0, accuracy: 6, "auto is neutral")
        XCTAssertGreaterThan(daylight.grey.redMinusBlue, auto.grey.redMinusBlue + 10, "daylight: warmer (redder)")
        XCTAssertLessThan(tungsten.grey.redMinusBlue, auto.grey.redMinusBlue - 10, "tungsten: colder (bluer)")

        // No fixed gains asked, yet the frames say which the preset uses: `effective` and
        // status's newest-frame metadata show them (tungsten light is corrected with more blue).
        let (_, got) = try d.ctl("get", "camera.whiteBalance.gains")
        XCTAssertTrue(got?["value"] is NSNull, String(describing: got))
        let gains = try XCTUnwrap(got?["effective"] as? [Double], String(describing: got))
        XCTAssertEqual(gains.count, 2)
        XCTAssertGreaterThan(gains[1], gains[0], "tungsten: blue gain above red")
        let frame = try XCTUnwrap((try d.status()["camera"] as? [String: Any])?["frame"] as? [String: Any])
        XCTAssertEqual(frame["autoWhiteBalance"] as? Bool, false, "a preset")
        XCTAssertEqual((frame["colourGains"] as? [Double])?.count, 2, String(describing: frame))
        XCTAssertNotNil(frame["exposureTimeMicroseconds"] as? Int, String(describing: frame))
    }

    func testALensOnTheSubjectIsSharperAndZoom2ShowsThePatternAtTwiceTheScale() throws {
        let d = try DaemonHarness(config: config)
        try d.start()
        defer { d.stop() }
        let (sharp, sharpPath) = try photo(d, [("camera.focus.lensPosition", "1")])
        let (blurred, _) = try photo(d, [("camera.focus.lensPosition", "6")])
        print("Laplacian variance of the stripes: lens 1 (on the subject) \(Int(sharp.stripeLaplacianVariance)), "
              + "lens 6 \(Int(blurred.stripeLaplacianVariance))")
        XCTAssertGreaterThan(sharp.stripeLaplacianVariance, 3 * blurred.stripeLaplacianVariance)
        let (_, exif, _) = try runTool("exiftool", ["-s", "-SubjectDistance", sharpPath])
        XCTAssertTrue(exif.contains("SubjectDistance                 : 1 m"), exif)

        let (one, _) = try photo(d, [("camera.focus.lensPosition", "1")])
        let (two, twoPath) = try photo(d, [("camera.zoom", "2")])
        print("stripe period in pixels: zoom 1 \(one.stripePeriod), zoom 2 \(two.stripePeriod)")
        XCTAssertEqual(two.stripePeriod / max(one.stripePeriod, 0.1), 2, accuracy: 0.15)
        let (_, zoom, _) = try runTool("exiftool", ["-s", "-DigitalZoomRatio", "-WhiteBalance", twoPath])
        XCTAssertTrue(zoom.contains("DigitalZoomRatio                : 2"), zoom)
        XCTAssertTrue(zoom.contains("WhiteBalance                    : Auto"), zoom)
    }

    func testTheSimSectionSetsTheSubjectAndTheScenesLight() throws {
        let d = try DaemonHarness(config: #"{"still": {"width": 640, "height": 480}, "sim": {"modeSwitchMs": 0, "#
                                  + #""subjectDioptres": 4, "sceneKelvin": 3000}}"#)
        try d.start()
        defer { d.stop() }
        let (auto, _) = try photo(d, [])
        let (onOldSubject, _) = try photo(d, [("camera.focus.lensPosition", "1")])
        let (onSubject, _) = try photo(d, [("camera.focus.lensPosition", "4")])
        let (daylight, _) = try photo(d, [("camera.whiteBalance.mode", "\"daylight\"")])
        print("subject at 4 dioptres: Laplacian variance lens 1 \(Int(onOldSubject.stripeLaplacianVariance)), "
              + "lens 4 \(Int(onSubject.stripeLaplacianVariance)); 3000 K scene, daylight white balance: "
              + "R-B \(Int(daylight.grey.redMinusBlue)) (auto \(Int(auto.grey.redMinusBlue)))")
        XCTAssertGreaterThan(auto.stripeLaplacianVariance, 3 * onOldSubject.stripeLaplacianVariance, "continuous AF found it")
        XCTAssertGreaterThan(onSubject.stripeLaplacianVariance, 3 * onOldSubject.stripeLaplacianVariance)
        XCTAssertGreaterThan(daylight.grey.redMinusBlue, 40, "daylight balance under tungsten light is orange")
    }
}

/// A JPEG decoded to RGB by ffmpeg, measured where the simulated scene puts things.
struct Photo {
    struct Patch {
        var red = 0.0, green = 0.0, blue = 0.0
        var luma: Double { 0.299 * red + 0.587 * green + 0.114 * blue }
        var redMinusBlue: Double { red - blue }
    }

    let width: Int
    let height: Int
    let rgb: [UInt8]

    init(_ path: String, dir: String) throws {
        let (_, dims, _) = try runTool("ffprobe", ["-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0", path])
        let wh = dims.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").compactMap { Int($0) }
        guard wh.count == 2 else { throw HarnessError("ffprobe: \(dims)") }
        (width, height) = (wh[0], wh[1])
        let raw = dir + "/decoded.rgb"
        let (code, _, err) = try runTool("ffmpeg", ["-v", "error", "-y", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
        guard code == 0 else { throw HarnessError("ffmpeg: \(err)") }
        rgb = Array(try Data(contentsOf: URL(fileURLWithPath: raw)))
        guard rgb.count == width * height * 3 else { throw HarnessError("decoded \(rgb.count) bytes") }
    }

    private func luma(_ x: Int, _ y: Int) -> Double {
        let i = (y * width + x) * 3
        return 0.299 * Double(rgb[i]) + 0.587 * Double(rgb[i + 1]) + 0.114 * Double(rgb[i + 2])
    }

    var grey: Patch {
        var p = Patch()
        var n = 0.0
        for y in stride(from: height * 78 / 100, to: height * 95 / 100, by: 2) {
            for x in stride(from: width / 10, to: width * 4 / 10, by: 2) {
                let i = (y * width + x) * 3
                p.red += Double(rgb[i]); p.green += Double(rgb[i + 1]); p.blue += Double(rgb[i + 2]); n += 1
            }
        }
        return Patch(red: p.red / n, green: p.green / n, blue: p.blue / n)
    }

    /// The variance of the Laplacian over the stripes (lower right).
    var stripeLaplacianVariance: Double {
        var values: [Double] = []
        for y in stride(from: height * 80 / 100, to: height * 95 / 100, by: 3) {
            for x in (width * 55 / 100)..<(width * 95 / 100) {
                values.append(luma(x - 1, y) + luma(x + 1, y) + luma(x, y - 1) + luma(x, y + 1) - 4 * luma(x, y))
            }
        }
        let mean = values.reduce(0, +) / Double(values.count)
        return values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count)
    }

    /// The stripes' period in pixels, from their rising edges through mid-grey.
    var stripePeriod: Double {
        let y = height * 88 / 100
        var rises: [Int] = []
        for x in (width * 55 / 100)..<(width * 95 / 100) where luma(x - 1, y) < 128 && luma(x, y) >= 128 { rises.append(x) }
        guard rises.count > 1 else { return 0 }
        return Double(rises.last! - rises.first!) / Double(rises.count - 1)
    }
}
