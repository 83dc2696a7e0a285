// SPDX-License-Identifier: BSD-2-Clause
import XCTest
import ShutterCore
@testable import ShutterSim

/// The simulated camera obeys the controls: each rule measured on the pixels
/// and the metadata it delivers, on a ManualClock.
final class SimSceneTests: XCTestCase {
    private func settings() -> SimCamera.Settings {
        var s = SimCamera.Settings()
        s.width = 320; s.height = 240; s.stillWidth = 640; s.stillHeight = 480
        s.fps = 30
        s.modeSwitchMs = 0
        s.streamDepth = 64
        return s
    }

    private func still(_ controls: CameraControls, scene: SimScene = SimScene()) async throws -> Frame {
        var s = settings()
        s.scene = scene
        let cam = SimCamera(settings: s, clock: ManualClock())
        await cam.apply(controls)
        return try await cam.captureStill()
    }

    private func controls(_ change: (inout CameraControls) -> Void) -> CameraControls {
        var c = CameraControls()
        change(&c)
        return c
    }

    func testAutoExposureConvergesOverFramesToMidGreyWithTheEVBias() async throws {
        let clock = ManualClock(start: .milliseconds(1_000))
        let cam = SimCamera(settings: settings(), clock: clock)
        let stream = try await cam.start()
        var it = stream.makeAsyncIterator()
        let firstFrame = await it.next()
        let first = try XCTUnwrap(firstFrame)
        let atEV0 = FrameProbe(first).grey.y
        XCTAssertEqual(atEV0, 16 + 219 * SimScene.greyReflectance, accuracy: 2, "the grey patch at mid-grey")
        XCTAssertEqual(first.metadata.exposureTimeMicroseconds, 2500, "1/400 s at 400 lux")
        await cam.apply(controls { $0.exposure.ev = 1 })
        await clock.advance(by: .milliseconds(400)) { await cam.settle() }
        await cam.stop()
        var greys: [Double] = []
        var exposures: [Int] = []
        while let f = await it.next() {
            greys.append(FrameProbe(f).grey.y)
            exposures.append(f.metadata.exposureTimeMicroseconds ?? 0)
        }
        print("EV 0 -> +1, grey patch luma per frame: \(greys.map { Int($0) }), exposure µs: \(exposures)")
        XCTAssertEqual(greys.count, 12)
        XCTAssertLessThan(greys[0], greys.last! - 20, "not there at once: it converges")
        for (a, b) in zip(greys, greys.dropFirst()) { XCTAssertLessThanOrEqual(a, b + 0.5, "and never overshoots") }
        XCTAssertEqual(greys.last!, 16 + 219 * min(1, 2 * SimScene.greyReflectance), accuracy: 2,
                       "EV +1: twice the target")
        XCTAssertEqual(exposures.last, 5000)
    }

    func testEVIsClippedAndNegativeEVDarkens() async throws {
        let plus2 = FrameProbe(try await still(controls { $0.exposure.ev = 2 })).grey.y
        let minus2 = FrameProbe(try await still(controls { $0.exposure.ev = -2 })).grey.y
        print("grey patch luma: EV +2 \(plus2), EV -2 \(minus2)")
        XCTAssertEqual(plus2, 235, accuracy: 1, "4 x 0.45 clips at white")
        XCTAssertEqual(minus2, 16 + 219 * SimScene.greyReflectance / 4, accuracy: 2)
    }

    func testManualShutterAndGainSetTheBrightnessLinearly() async throws {
        func grey(_ us: Int, _ gain: Double, lux: Double = 400) async throws -> (Double, FrameMetadata) {
            let f = try await still(controls { $0.exposure.shutterUs = us; $0.exposure.gain = gain },
                                    scene: SimScene(lux: lux))
            return (FrameProbe(f).grey.y - 16, f.metadata)
        }
        let (base, meta) = try await grey(1000, 1)
        let (longer, _) = try await grey(2000, 1)
        let (gained, gainMeta) = try await grey(1000, 2)
        let (brighter, _) = try await grey(1000, 1, lux: 800)
        print("grey patch above black: 1000 µs x1 \(base), 2000 µs x1 \(longer), 1000 µs x2 \(gained), at 800 lux \(brighter)")
        XCTAssertEqual(meta.exposureTimeMicroseconds, 1000)
        XCTAssertEqual(gainMeta.analogueGain, 2)
        XCTAssertEqual(longer / base, 2, accuracy: 0.05, "brightness ∝ shutter")
        XCTAssertEqual(gained / base, 2, accuracy: 0.05, "brightness ∝ gain")
        XCTAssertEqual(brighter / base, 2, accuracy: 0.05, "brightness ∝ scene luminance")
        // Only the shutter fixed: auto exposure makes up with gain.
        let f = try await still(controls { $0.exposure.shutterUs = 625 })
        XCTAssertEqual(f.metadata.analogueGain ?? 0, 4, accuracy: 0.01)
    }

    func testWhiteBalanceTintsTheGreyPatchAgainstTheScenesTemperature() async throws {
        func grey(_ mode: CameraControls.WhiteBalance.Mode, gains: [Double]? = nil) async throws -> (FrameProbe.Patch, FrameMetadata) {
            let f = try await still(controls { $0.whiteBalance.mode = mode; $0.whiteBalance.gains = gains },
                                    scene: SimScene(colourTemperature: 4500))
            return (FrameProbe(f).grey, f.metadata)
        }
        let (auto, autoMeta) = try await grey(.auto)
        let (daylight, dayMeta) = try await grey(.daylight)
        let (tungsten, tungMeta) = try await grey(.tungsten)
        let (manual, manualMeta) = try await grey(.auto, gains: [1.5, 1])
        let figures = [("auto", auto), ("daylight", daylight), ("tungsten", tungsten), ("manual [1.5, 1]", manual)]
            .map { "\($0.0) Cb \(Int($0.1.cb)) Cr \(Int($0.1.cr))" }
        print("grey patch in a 4500 K scene: " + figures.joined(separator: ", "))
        XCTAssertEqual(auto.cb, 128, accuracy: 1, "auto is neutral on the grey patch")
        XCTAssertEqual(auto.cr, 128, accuracy: 1)
        XCTAssertEqual(autoMeta.colourTemperature, 4500)
        XCTAssertGreaterThan(daylight.cr, 132, "daylight is colder than the scene: warmer, redder")
        XCTAssertLessThan(daylight.cb, 124)
        XCTAssertLessThan(tungsten.cr, 124, "tungsten is warmer than the scene: bluer")
        XCTAssertGreaterThan(tungsten.cb, 132)
        XCTAssertEqual(dayMeta.colourTemperature, 5500)
        XCTAssertEqual(tungMeta.colourTemperature, 3000)
        XCTAssertGreaterThan(manual.cr, 132, "a red gain above neutral reddens")
        XCTAssertEqual(manualMeta.colourGains, [1.5, 1])
    }

    func testALensOnTheSubjectIsSharpAndBlurGrowsWithTheDefocus() async throws {
        let scene = SimScene(subjectDioptres: 2)
        var sharpness: [Double] = []
        for lens in [2.0, 2.5, 3.0, 5.0] {
            let f = try await still(controls { $0.focus.lensPosition = lens }, scene: scene)
            XCTAssertEqual(f.metadata.lensPosition, lens)
            XCTAssertEqual(f.metadata.autofocusState, .idle, "manual focus")
            sharpness.append(FrameProbe(f).stripeLaplacianVariance)
        }
        print("Laplacian variance of the stripes, lens 2 / 2.5 / 3 / 5 dioptres on a subject at 2: \(sharpness.map { Int($0) })")
        for (a, b) in zip(sharpness, sharpness.dropFirst()) { XCTAssertGreaterThan(a, b * 1.2) }
    }

    func testContinuousAutofocusConvergesToTheSubject() async throws {
        let clock = ManualClock(start: .milliseconds(1_000))
        var s = settings()
        s.scene.subjectDioptres = 4
        let cam = SimCamera(settings: s, clock: clock)
        await cam.apply(controls { $0.focus.lensPosition = 0 })
        let stream = try await cam.start()
        var it = stream.makeAsyncIterator()
        let firstFrame = await it.next()
        let first = try XCTUnwrap(firstFrame)
        XCTAssertEqual(first.metadata.lensPosition, 0)
        await cam.apply(controls { $0.focus.mode = .continuous })
        await clock.advance(by: .milliseconds(400)) { await cam.settle() }
        await cam.stop()
        var lens: [Double] = []
        var last: Frame?
        while let f = await it.next() {
            lens.append(f.metadata.lensPosition ?? -1)
            last = f
        }
        print("continuous AF towards 4 dioptres, lens per frame: \(lens.map { ($0 * 100).rounded() / 100 })")
        XCTAssertLessThan(lens[0], 3, "it moves over frames")
        XCTAssertEqual(lens.last, 4)
        XCTAssertEqual(last?.metadata.autofocusState, .focused)
        XCTAssertGreaterThan(FrameProbe(last!).stripeLaplacianVariance, 2 * FrameProbe(first).stripeLaplacianVariance)
    }

    func testZoomShowsTheSceneAtThatScale() async throws {
        let one = FrameProbe(try await still(CameraControls())).stripePeriod
        let two = FrameProbe(try await still(controls { $0.zoom = 2 })).stripePeriod
        let roi = FrameProbe(try await still(controls { $0.roi = [0.5, 0.5, 0.25, 0.5] })).stripePeriod
        print("stripe period in pixels: zoom 1 \(one), zoom 2 \(two), roi a quarter wide \(roi)")
        XCTAssertEqual(two / one, 2, accuracy: 0.1)
        XCTAssertEqual(roi / one, 4, accuracy: 0.2)
    }

    func testBrightnessContrastAndSaturationActOnTheOutput() async throws {
        let plain = FrameProbe(try await still(CameraControls()))
        let bright = FrameProbe(try await still(controls { $0.image.brightness = 0.2 }))
        let contrast = FrameProbe(try await still(controls { $0.image.contrast = 2 }))
        let grey = FrameProbe(try await still(controls { $0.image.saturation = 0 }))
        print("grey luma plain \(plain.grey.y), brightness 0.2 \(bright.grey.y); bar chroma spread plain "
              + "\(plain.barChromaSpread), saturation 0 \(grey.barChromaSpread); contrast 2 grey \(contrast.grey.y)")
        XCTAssertEqual(bright.grey.y - plain.grey.y, 0.2 * 219, accuracy: 2)
        XCTAssertLessThan(contrast.grey.y, plain.grey.y - 5, "below mid-grey moves down with more contrast")
        XCTAssertGreaterThan(plain.barChromaSpread, 50)
        XCTAssertLessThan(grey.barChromaSpread, 2)
    }
}

/// Measures a frame: the grey patch, the stripes, the bars.
struct FrameProbe {
    struct Patch { var y: Double; var cb: Double; var cr: Double }
    let frame: Frame

    init(_ frame: Frame) { self.frame = frame }

    private var w: Int { frame.width }
    private var h: Int { frame.height }
    private func y(_ x: Int, _ r: Int) -> Double { Double(frame.planes[0].base.load(fromByteOffset: r * w + x, as: UInt8.self)) }
    private func chroma(_ plane: Int, _ x: Int, _ r: Int) -> Double {
        Double(frame.planes[plane].base.load(fromByteOffset: (r / 2) * ((w + 1) / 2) + x / 2, as: UInt8.self))
    }

    /// The mean of the grey patch (the lower left of the picture).
    var grey: Patch {
        var p = Patch(y: 0, cb: 0, cr: 0)
        var n = 0.0
        for r in stride(from: h * 78 / 100, to: h * 95 / 100, by: 2) {
            for x in stride(from: w / 10, to: w * 4 / 10, by: 2) {
                p.y += y(x, r); p.cb += chroma(1, x, r); p.cr += chroma(2, x, r); n += 1
            }
        }
        return Patch(y: p.y / n, cb: p.cb / n, cr: p.cr / n)
    }

    /// The variance of the horizontal Laplacian over the stripes (the lower right).
    var stripeLaplacianVariance: Double {
        var values: [Double] = []
        for r in stride(from: h * 80 / 100, to: h * 95 / 100, by: 4) {
            for x in (w * 55 / 100)..<(w * 95 / 100) { values.append(y(x - 1, r) - 2 * y(x, r) + y(x + 1, r)) }
        }
        let mean = values.reduce(0, +) / Double(values.count)
        return values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count)
    }

    /// The stripes' period in pixels: the span between the first and the last rising edge over their count.
    var stripePeriod: Double {
        let r = h * 88 / 100
        var rises: [Int] = []
        for x in (w * 55 / 100)..<(w * 95 / 100) where y(x - 1, r) < 128 && y(x, r) >= 128 { rises.append(x) }
        guard rises.count > 1 else { return 0 }
        return Double(rises.last! - rises.first!) / Double(rises.count - 1)
    }

    /// The spread of the bars' chroma (max minus min of Cb and Cr along a row in the upper part).
    var barChromaSpread: Double {
        let r = h * 30 / 100
        let cbs = (0..<w).map { chroma(1, $0, r) }, crs = (0..<w).map { chroma(2, $0, r) }
        return max(cbs.max()! - cbs.min()!, crs.max()! - crs.min()!)
    }
}
