import Foundation
import XCTest
@testable import ShutterService

/// `shutterctl focus X Y`, the demos' tap-to-focus, on the real shutterd on the
/// simulated board, driven only through shutterctl: the point moves the
/// exposure metering (measured on the decoded photos), becomes the focus
/// window, survives a restart, and bad input is refused naming what is allowed.
/// The scene: a white patch (left) and a dark patch beside it between the
/// colour bars and the grey patch.
final class EndToEndFocusTests: XCTestCase {
    // `focused`: each still gets the sim's warm-up frames, so auto exposure has settled on
    // the window just set (a `press` photo is the frame at the press, mid-convergence).
    private let config = #"{"still": {"width": 640, "height": 480, "moment": "focused"}, "sim": {"modeSwitchMs": 0}}"#
    /// Centres of the white and the dark patch, as fractions of the picture.
    private let onWhite = ("0.12", "0.67"), onDark = ("0.37", "0.67")

    private func focus(_ d: DaemonHarness, _ x: String, _ y: String) throws -> [String: Any] {
        let (code, reply) = try d.ctl("focus", x, y)
        XCTAssertEqual(code, 0, "focus \(x) \(y): \(String(describing: reply)) \(d.log())")
        return try XCTUnwrap(reply, d.log())
    }

    private func photo(_ d: DaemonHarness) throws -> Photo {
        let (code, reply) = try d.ctl("tap")
        XCTAssertEqual(code, 0, d.log())
        return try Photo(try XCTUnwrap((reply?["files"] as? [String])?.first, d.log()), dir: d.dir)
    }

    private func setting(_ reply: [String: Any], _ key: String) -> [String: Any]? {
        (reply["settings"] as? [[String: Any]])?.first { $0["key"] as? String == key }
    }

    func testAFocusPointMovesTheMeteringAndIsTheFocusWindowAcrossARestart() throws {
        let d = try DaemonHarness(config: config)
        try d.start()
        defer { d.stop() }
        let plain = try photo(d)

        let white = try focus(d, onWhite.0, onWhite.1)
        let window = [0.0575, 0.6075, 0.125, 0.125]
        XCTAssertEqual(setting(white, "camera.focus.window")?["value"] as? [Double], window, "\(white)")
        XCTAssertEqual(setting(white, "camera.exposure.window")?["value"] as? [Double], window)
        XCTAssertEqual(setting(white, "camera.focus.window")?["source"] as? String, "runtime")
        let note = white["note"] as? String ?? ""
        XCTAssertTrue(note.contains("continuous autofocus follows the window"), note)
        XCTAssertFalse(note.contains("not applied"), "the simulated camera has both windows: \(note)")
        let onBright = try photo(d)

        _ = try focus(d, onDark.0, onDark.1)
        let onShadow = try photo(d)
        func figures(_ p: Photo) -> String {
            "grey patch \(Int(p.grey.luma)), picture mean \(Int(p.meanLuma)), white patch \(Int(p.whitePatch)), "
                + "dark patch \(Int(p.darkPatch))"
        }
        print("luma, default metering: \(figures(plain)); focus on the white patch: \(figures(onBright)); "
              + "focus on the dark patch: \(figures(onShadow))")
        XCTAssertLessThan(onBright.grey.luma, onShadow.grey.luma - 100, "metering the bright patch darkens the photo")
        XCTAssertLessThan(onBright.meanLuma, onShadow.meanLuma - 60)
        XCTAssertLessThan(onBright.grey.luma, plain.grey.luma - 30, "darker than the default metering")
        XCTAssertGreaterThan(onShadow.grey.luma, plain.grey.luma + 60, "brighter than the default metering")
        // Where it is told to meter, the metered patch lands near mid-grey either way.
        XCTAssertEqual(onBright.whitePatch, onShadow.darkPatch, accuracy: 25)

        // The focus window, as get shows it; what the camera has.
        let (_, got) = try d.ctl("get", "camera.focus.window")
        XCTAssertEqual(got?["value"] as? [Double], [0.3075, 0.6075, 0.125, 0.125])
        XCTAssertEqual(got?["effective"] as? [Double], [0.3075, 0.6075, 0.125, 0.125], "the running camera has it")
        let camera = try d.status()["camera"] as? [String: Any]
        XCTAssertEqual((camera?["lacking"] as? [Any])?.count, 0, "\(String(describing: camera))")

        // Remembered like `set`: the camera starts with it after a restart.
        d.stop()
        try d.start()
        let (_, again) = try d.ctl("get", "camera.exposure.window")
        XCTAssertEqual(again?["value"] as? [Double], [0.3075, 0.6075, 0.125, 0.125], d.log())
        XCTAssertEqual(again?["source"] as? String, "runtime")
        let restarted = try photo(d)
        print("after the restart, still metering the dark patch: \(figures(restarted))")
        XCTAssertGreaterThan(restarted.grey.luma, plain.grey.luma + 60)

        // Back to the configuration's windows (none): the default metering again.
        let (resetCode, reset) = try d.ctl("focus", "reset")
        XCTAssertEqual(resetCode, 0, d.log())
        XCTAssertTrue(setting(reset ?? [:], "camera.focus.window")?["value"] is NSNull, "\(String(describing: reset))")
        XCTAssertEqual(setting(reset ?? [:], "camera.exposure.window")?["source"] as? String, "config")
        XCTAssertEqual(try photo(d).grey.luma, plain.grey.luma, accuracy: 4)
    }

    func testAutoFocusRunsACycleThereManualLeavesTheLensAndBadInputIsRefused() throws {
        let d = try DaemonHarness(config: config)
        try d.start()
        defer { d.stop() }
        XCTAssertEqual(try d.ctl("set", "camera.focus.mode", "auto").0, 0)
        let auto = try focus(d, "0.5", "0.5")
        print("focus 0.5 0.5 in auto mode: \(auto["note"] ?? "")")
        XCTAssertTrue((auto["note"] as? String ?? "").contains("autofocus cycle focused, lens at 1.0 dioptres"), "\(auto)")
        XCTAssertEqual(setting(auto, "camera.focus.window")?["value"] as? [Double], [0.4375, 0.4375, 0.125, 0.125])

        XCTAssertEqual(try d.ctl("set", "camera.focus.lensPosition", "3").0, 0)
        let manual = try focus(d, "1", "0")
        print("focus 1 0 with a lens position: \(manual["note"] ?? "")")
        XCTAssertTrue((manual["note"] as? String ?? "").contains("manual focus: the lens is left alone"), "\(manual)")
        XCTAssertEqual(setting(manual, "camera.focus.window")?["value"] as? [Double], [0.875, 0, 0.125, 0.125],
                       "clamped inside the picture")

        for args in [["1.5", "0.5"], ["0.5", "-1"], ["abc", "0.5"], ["0.5"], [], ["0.5", "0.5", "0.5"], ["nan", "0"]] {
            let (code, err) = try refused(d, args)
            XCTAssertEqual(code, 1, "focus \(args): \(err)")
            XCTAssertTrue(err.contains("each a number from 0 to 1"), "focus \(args): \(err)")
        }
        // Nothing changed by the refusals.
        let (_, got) = try d.ctl("get", "camera.focus.window")
        XCTAssertEqual(got?["value"] as? [Double], [0.875, 0, 0.125, 0.125])
    }

    /// shutterctl's exit status and what it wrote to stderr.
    private func refused(_ d: DaemonHarness, _ args: [String]) throws -> (Int32, String) {
        let (code, _, err) = try runTool(DaemonHarness.binDir + "/shutterctl", ["--socket", d.socket, "focus"] + args)
        return (code, err)
    }
}

extension Photo {
    /// The whole picture's mean luma.
    var meanLuma: Double { mean(x: 0...0.999, y: 0...0.999) }
    /// The white patch (left, between the bars and the grey patch).
    var whitePatch: Double { mean(x: 0.04...0.21, y: 0.63...0.72) }
    /// The dark patch beside it.
    var darkPatch: Double { mean(x: 0.29...0.46, y: 0.63...0.72) }

    private func mean(x: ClosedRange<Double>, y: ClosedRange<Double>) -> Double {
        var sum = 0.0, n = 0.0
        for r in stride(from: Int(y.lowerBound * Double(height)), through: Int(y.upperBound * Double(height)), by: 2) {
            for c in stride(from: Int(x.lowerBound * Double(width)), through: Int(x.upperBound * Double(width)), by: 2) {
                let i = (r * width + c) * 3
                sum += 0.299 * Double(rgb[i]) + 0.587 * Double(rgb[i + 1]) + 0.114 * Double(rgb[i + 2])
                n += 1
            }
        }
        return sum / n
    }
}
