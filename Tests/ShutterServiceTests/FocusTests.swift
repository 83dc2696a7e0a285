// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
@testable import ShutterService

/// `focus X Y`, the demos' tap-to-focus, on the service on the simulated board (in
/// this process, on the manual clock: InProcessRig), driven only through control
/// requests as shutterctl sends them: the point moves the exposure metering
/// (measured on the decoded photos), becomes the focus window, survives a
/// restart, and bad input is refused naming what is allowed (shutterctl's own
/// parsing of the arguments: EndToEndTests). The scene: a white patch (left) and
/// a dark patch beside it between the colour bars and the grey patch.
final class FocusTests: XCTestCase {
    // `focused`: each still gets the sim's warm-up frames, so auto exposure has settled on
    // the window just set (a `press` photo is the frame at the press, mid-convergence).
    private let config = #"{"still": {"width": 640, "height": 480, "moment": "focused"}, "sim": {"modeSwitchMs": 0}}"#
    /// Centres of the white and the dark patch, as fractions of the picture.
    private let onWhite = (0.12, 0.67), onDark = (0.37, 0.67)

    private func focus(_ d: InProcessRig, _ x: Double, _ y: Double, file: StaticString = #filePath,
                       line: UInt = #line) async throws -> ControlReply {
        let reply = try await d.focus(x, y, file: file, line: line)
        XCTAssertTrue(reply.ok, "focus \(x) \(y): \(reply)", file: file, line: line)
        return reply
    }

    private func photo(_ d: InProcessRig) async throws -> Photo {
        try Photo(try await d.photo(), dir: d.dir)
    }

    private func setting(_ reply: ControlReply, _ key: String) -> SettingState? {
        reply.settings?.first { $0.key == key }
    }

    func testAFocusPointMovesTheMeteringAndIsTheFocusWindowAcrossARestart() async throws {
        let d = try await InProcessRig.start(self, json: config)
        let plain = try await photo(d)

        let white = try await focus(d, onWhite.0, onWhite.1)
        let window = [0.0575, 0.6075, 0.125, 0.125]
        XCTAssertEqual(setting(white, "camera.focus.window")?.value.numbers, window, "\(white)")
        XCTAssertEqual(setting(white, "camera.exposure.window")?.value.numbers, window)
        XCTAssertEqual(setting(white, "camera.focus.window")?.source, "runtime")
        let note = white.note ?? ""
        XCTAssertTrue(note.contains("continuous autofocus follows the window"), note)
        XCTAssertFalse(note.contains("not applied"), "the simulated camera has both windows: \(note)")
        let onBright = try await photo(d)

        _ = try await focus(d, onDark.0, onDark.1)
        let onShadow = try await photo(d)
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
        let got = try await d.ask("get", "camera.focus.window")
        XCTAssertEqual(got.value?.numbers, [0.3075, 0.6075, 0.125, 0.125])
        XCTAssertEqual(got.effective?.numbers, [0.3075, 0.6075, 0.125, 0.125], "the running camera has it")
        let camera = await d.status().camera
        XCTAssertEqual(camera.lacking.count, 0, "\(camera)")

        // Remembered like `set`: the camera starts with it after a restart.
        let code = try await d.stop()
        XCTAssertEqual(code, 0)
        let e = try await InProcessRig.start(self, json: config, dir: d.dir)
        let again = try await e.ask("get", "camera.exposure.window")
        XCTAssertEqual(again.value?.numbers, [0.3075, 0.6075, 0.125, 0.125], e.log.text)
        XCTAssertEqual(again.source, "runtime")
        let restarted = try await photo(e)
        print("after the restart, still metering the dark patch: \(figures(restarted))")
        XCTAssertGreaterThan(restarted.grey.luma, plain.grey.luma + 60)

        // Back to the configuration's windows (none): the default metering again.
        let reset = try await e.ask(ControlRequest(cmd: "focus", action: "reset"))
        XCTAssertTrue(reset.ok, "\(reset)")
        XCTAssertEqual(setting(reset, "camera.focus.window")?.value, .null, "\(reset)")
        XCTAssertEqual(setting(reset, "camera.exposure.window")?.source, "config")
        let after = try await photo(e)
        XCTAssertEqual(after.grey.luma, plain.grey.luma, accuracy: 4)
    }

    func testAutoFocusRunsACycleThereManualLeavesTheLensAndBadInputIsRefused() async throws {
        let d = try await InProcessRig.start(self, json: config)
        let mode = try await d.set("camera.focus.mode", "auto")
        XCTAssertTrue(mode.ok, "\(mode)")
        let auto = try await focus(d, 0.5, 0.5)
        print("focus 0.5 0.5 in auto mode: \(auto.note ?? "")")
        XCTAssertTrue((auto.note ?? "").contains("autofocus cycle focused, lens at 1.0 dioptres"), "\(auto)")
        XCTAssertEqual(setting(auto, "camera.focus.window")?.value.numbers, [0.4375, 0.4375, 0.125, 0.125])

        let lens = try await d.set("camera.focus.lensPosition", "3")
        XCTAssertTrue(lens.ok, "\(lens)")
        let manual = try await focus(d, 1, 0)
        print("focus 1 0 with a lens position: \(manual.note ?? "")")
        XCTAssertTrue((manual.note ?? "").contains("manual focus: the lens is left alone"), "\(manual)")
        XCTAssertEqual(setting(manual, "camera.focus.window")?.value.numbers, [0.875, 0, 0.125, 0.125],
                       "clamped inside the picture")

        // Points outside the picture, or none, reaching the service (shutterctl refuses them first).
        for (x, y) in [(1.5, 0.5), (0.5, -1), (Double.nan, 0)] as [(Double, Double)] {
            let refused = try await d.focus(x, y)
            XCTAssertFalse(refused.ok, "focus \(x) \(y): \(refused)")
            XCTAssertTrue(refused.error?.contains("each a number from 0 to 1") == true, "focus \(x) \(y): \(refused)")
        }
        let none = try await d.ask(ControlRequest(cmd: "focus"))
        XCTAssertFalse(none.ok, "\(none)")
        // Nothing changed by the refusals.
        let got = try await d.ask("get", "camera.focus.window")
        XCTAssertEqual(got.value?.numbers, [0.875, 0, 0.125, 0.125])
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
