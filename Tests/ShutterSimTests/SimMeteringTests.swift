// SPDX-License-Identifier: BSD-2-Clause
import XCTest
import ShutterCore
@testable import ShutterSim

/// The simulated auto exposure meters where it is told: the metering mode's
/// weights over the picture or the exposure window, computed from the scene's
/// layout; metering a bright part darkens the picture, a dark part brightens it.
final class SimMeteringTests: XCTestCase {
    private func controls(_ change: (inout CameraControls) -> Void) -> CameraControls {
        var c = CameraControls()
        change(&c)
        return c
    }

    /// The window `shutterctl focus X Y` makes.
    private func window(_ x: Double, _ y: Double) throws -> [Double] {
        try PointOfInterest(x: x, y: y).window(controls: CameraControls())
    }

    private func assertRects(_ a: [NormalisedRect], _ b: [NormalisedRect], _ message: String = "",
                             line: UInt = #line) {
        XCTAssertEqual(a.count, b.count, message, line: line)
        for (r, e) in zip(a, b) {
            for (u, v) in [(r.x, e.x), (r.y, e.y), (r.width, e.width), (r.height, e.height)] {
                XCTAssertEqual(u, v, accuracy: 1e-9, "\(r) against \(e) \(message)", line: line)
            }
        }
    }

    func testTheModesWeighTheirZones() {
        let area = NormalisedRect(x: 0.2, y: 0.4, width: 0.4, height: 0.2)
        let average = SimMetering.zones(.average, in: area)
        XCTAssertEqual(average.map(\.rect), [area])
        let centre = SimMetering.zones(.centre, in: area)
        assertRects(centre.map(\.rect), [area, NormalisedRect(x: 0.3, y: 0.45, width: 0.2, height: 0.1)])
        XCTAssertEqual(centre.map(\.weight), [1, 3], "the central half counts 4 times")
        let spot = SimMetering.zones(.spot, in: area)
        assertRects(spot.map(\.rect), [NormalisedRect(x: 0.35, y: 0.475, width: 0.1, height: 0.05)])
    }

    func testTheMeteredMeanOfTheScene() throws {
        // The whole picture, by hand: bars 0.5 over 60 %, white 0.9 and dark 0.05
        // patches 3.75 % each, grey 0.45 over 12.5 %, stripes 0.465 over 20 %.
        let average = 0.6 * 0.5 + 0.0375 * 0.9 + 0.0375 * 0.05 + 0.125 * 0.45 + 0.2 * 0.465
        XCTAssertEqual(SimMetering.mean(controls { $0.exposure.metering = .average }), average, accuracy: 1e-9)
        // Spot: the central quarter, x and y 0.375...0.625: bars down to 0.6, then the dark patch and stripes.
        let spot = (0.25 * 0.225 * 0.5 + 0.125 * 0.025 * 0.05 + 0.125 * 0.025 * 0.465) / 0.0625
        XCTAssertEqual(SimMetering.mean(controls { $0.exposure.metering = .spot }), spot, accuracy: 1e-9)
        XCTAssertEqual(SimMetering.target, SimMetering.mean(CameraControls()), "the default reading is AE's target")
        // A window on a patch meters that patch, whatever the mode.
        for mode in CameraControls.Exposure.Metering.allCases {
            XCTAssertEqual(SimMetering.mean(controls { $0.exposure.metering = mode; $0.exposure.window = try! window(0.12, 0.67) }),
                           SimScene.whiteReflectance, accuracy: 1e-9, "\(mode) on the white patch")
            XCTAssertEqual(SimMetering.mean(controls { $0.exposure.metering = mode; $0.exposure.window = try! window(0.37, 0.67) }),
                           SimScene.darkReflectance, accuracy: 1e-9, "\(mode) on the dark patch")
        }
        // A window straddling the grey patch and the stripes: centre-weighted leans to its middle.
        let straddle = [0.4, 0.8, 0.2, 0.1]
        let avg = SimMetering.mean(controls { $0.exposure.metering = .average; $0.exposure.window = straddle })
        XCTAssertEqual(avg, (0.45 + 0.465) / 2, accuracy: 1e-9)
    }

    func testTheWindowCountsOnlyWhereThePictureShowsIt() {
        // Zoom 2 shows the centre half; a window outside it is not in the picture: the picture is metered.
        let zoomed = controls { $0.zoom = 2 }
        XCTAssertEqual(SimMetering.area(controls { $0.zoom = 2; $0.exposure.window = [0, 0.875, 0.125, 0.125] }),
                       SimMetering.area(zoomed))
        assertRects([SimMetering.area(controls { $0.zoom = 2; $0.exposure.window = [0.2, 0.2, 0.1, 0.1] })],
                    [NormalisedRect(x: 0.25, y: 0.25, width: 0.05, height: 0.05)], "the part inside")
        XCTAssertEqual(SimMetering.area(CameraControls()), .full)
    }

    func testMeteringABrightPatchDarkensThePictureAndADarkOneBrightensIt() async throws {
        var s = SimCamera.Settings()
        s.width = 320; s.height = 240; s.stillWidth = 640; s.stillHeight = 480
        s.modeSwitchMs = 0
        func still(_ c: CameraControls) async throws -> Frame {
            let cam = SimCamera(settings: s, clock: ManualClock())
            await cam.apply(c)
            return try await cam.captureStill()
        }
        let plain = try await still(CameraControls())
        let white = try await still(controls { $0.exposure.window = try! window(0.12, 0.67) })
        let dark = try await still(controls { $0.exposure.window = try! window(0.37, 0.67) })
        let spot = try await still(controls { $0.exposure.metering = .spot })
        let figures = [("default", plain), ("window on white", white), ("window on dark", dark), ("spot", spot)]
            .map { "\($0.0): grey \(Int(FrameProbe($0.1).grey.y)), white \(Int(FrameProbe($0.1).whitePatch)), "
                + "dark \(Int(FrameProbe($0.1).darkPatch)), \($0.1.metadata.exposureTimeMicroseconds ?? 0) µs" }
        print("metering: " + figures.joined(separator: "; "))
        XCTAssertEqual(FrameProbe(plain).grey.y, 16 + 219 * SimScene.greyReflectance, accuracy: 2,
                       "the default metering: the grey patch at mid-grey, as before")
        XCTAssertEqual(plain.metadata.exposureTimeMicroseconds, 2500)
        // Metered, each patch lands where the default put the scene's mean.
        let level = SimMetering.target
        XCTAssertEqual(FrameProbe(white).whitePatch, 16 + 219 * level, accuracy: 2)
        XCTAssertEqual(FrameProbe(dark).darkPatch, 16 + 219 * level, accuracy: 2)
        XCTAssertLessThan(FrameProbe(white).grey.y, FrameProbe(plain).grey.y - 40, "bright metered: darker")
        XCTAssertGreaterThan(FrameProbe(dark).grey.y, 230, "dark metered: brighter (the grey patch clips)")
        XCTAssertLessThan(white.metadata.exposureTimeMicroseconds ?? 0, 2500)
        XCTAssertGreaterThan(dark.metadata.exposureTimeMicroseconds ?? 0, 8 * 2500)
        // Spot on the frame's centre meters mostly the bars, a little brighter than the default's reading.
        XCTAssertLessThan(FrameProbe(spot).grey.y, FrameProbe(plain).grey.y)
    }
}

extension FrameProbe {
    /// The white patch's luma (left of the lower band's upper part).
    var whitePatch: Double { mean(x: 0.04...0.21, y: 0.63...0.72) }
    /// The dark patch's luma (beside the white one).
    var darkPatch: Double { mean(x: 0.29...0.46, y: 0.63...0.72) }

    private func mean(x: ClosedRange<Double>, y: ClosedRange<Double>) -> Double {
        let w = frame.width, h = frame.height
        var sum = 0.0, n = 0.0
        for r in Int(y.lowerBound * Double(h))...Int(y.upperBound * Double(h)) {
            for c in Int(x.lowerBound * Double(w))...Int(x.upperBound * Double(w)) {
                sum += Double(frame.planes[0].base.load(fromByteOffset: r * w + c, as: UInt8.self))
                n += 1
            }
        }
        return sum / n
    }
}
