// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import XCTest
@testable import ShutterHardware

/// The libcamera side of the control vocabulary: names, enum numbers and
/// order as rpicam-apps sets them, and the reasons for what a camera lacks.
final class CameraControlsTests: XCTestCase {
    /// A Camera Module 3 on libcamera 0.5+: every control, the mode controls, no AeEnable.
    static let imx708 = LibcameraControlSupport(
        names: Set(LibcameraControlSupport.knownNames).subtracting(["AeEnable"]),
        cropMaximum: PixelRect(x: 0, y: 0, width: 4608, height: 2592), flickerModeMaximum: 1,
        defaultLensPosition: 1)
    /// The same before libcamera 0.5: AeEnable, no ExposureTimeMode/AnalogueGainMode.
    static let imx708Old = LibcameraControlSupport(
        names: Set(LibcameraControlSupport.knownNames).subtracting(["ExposureTimeMode", "AnalogueGainMode"]),
        cropMaximum: imx708.cropMaximum, defaultLensPosition: 1)
    /// vimc: its sensor's test pattern generator has brightness, contrast and saturation only.
    static let vimc = LibcameraControlSupport(names: ["Brightness", "Contrast", "Saturation"])

    private func plan(_ edit: (inout CameraControls) -> Void, on camera: LibcameraControlSupport = imx708,
                      role: CameraStreamRole = .video) -> LibcameraControlPlan {
        var c = CameraControls()
        edit(&c)
        return c.libcameraPlan(for: camera, role: role)
    }

    private func value(_ name: String, in p: LibcameraControlPlan) -> [Double]? {
        p.settings.first { $0.name == name }?.values
    }

    func testManualShutterAndGainSetTheirModesFirstOnNewLibcamera() throws {
        let p = plan { $0.exposure.shutterUs = 10_000; $0.exposure.gain = 2 }
        let names = p.settings.map(\.name)
        let t = try XCTUnwrap(names.firstIndex(of: "ExposureTime"))
        let tm = try XCTUnwrap(names.firstIndex(of: "ExposureTimeMode"))
        let g = try XCTUnwrap(names.firstIndex(of: "AnalogueGain"))
        let gm = try XCTUnwrap(names.firstIndex(of: "AnalogueGainMode"))
        XCTAssertLessThan(tm, t)
        XCTAssertLessThan(gm, g)
        XCTAssertFalse(names.contains("AeEnable"))
        XCTAssertEqual(p.settings[tm].values, [1], "ExposureTimeModeManual")
        XCTAssertEqual(p.settings[t].values, [10_000])
        XCTAssertEqual(p.settings[gm].values, [1])
        XCTAssertEqual(p.settings[g].values, [2])
        XCTAssertEqual(p.lacking, [])
        // Shutter fixed, gain automatic.
        let half = plan { $0.exposure.shutterUs = 10_000 }
        XCTAssertEqual(value("AnalogueGainMode", in: half), [0])
        XCTAssertNil(value("AnalogueGain", in: half))
        // All automatic: both modes Auto, no values.
        let auto = plan { _ in }
        XCTAssertEqual(value("ExposureTimeMode", in: auto), [0])
        XCTAssertEqual(value("AnalogueGainMode", in: auto), [0])
        XCTAssertNil(value("ExposureTime", in: auto))
    }

    func testManualShutterOnOldLibcameraUsesAeEnable() {
        var p = plan({ $0.exposure.shutterUs = 20_000 }, on: Self.imx708Old)
        XCTAssertEqual(p.settings.first, ControlSetting(name: "AeEnable", values: [1]), "gain stays automatic")
        XCTAssertEqual(value("ExposureTime", in: p), [20_000])
        XCTAssertFalse(p.settings.contains { $0.name == "ExposureTimeMode" })
        p = plan({ $0.exposure.shutterUs = 20_000; $0.exposure.gain = 4 }, on: Self.imx708Old)
        XCTAssertEqual(p.settings.first, ControlSetting(name: "AeEnable", values: [0]), "both fixed: AE off")
        XCTAssertEqual(value("AnalogueGain", in: p), [4])
    }

    func testEVMeteringExposureModeAndFlicker() {
        var p = plan {
            $0.exposure.ev = -1.5
            $0.exposure.metering = .spot
            $0.exposure.mode = .long
            $0.exposure.flicker = .hz50
        }
        XCTAssertEqual(value("ExposureValue", in: p), [-1.5])
        XCTAssertEqual(value("AeMeteringMode", in: p), [1], "MeteringSpot")
        XCTAssertEqual(value("AeExposureMode", in: p), [2], "ExposureLong")
        XCTAssertEqual(value("AeFlickerMode", in: p), [1], "FlickerManual")
        XCTAssertEqual(value("AeFlickerPeriod", in: p), [10_000])
        p = plan { $0.exposure.metering = .average; $0.exposure.mode = .short; $0.exposure.flicker = .hz60 }
        XCTAssertEqual(value("AeMeteringMode", in: p), [2], "average is MeteringMatrix, as in rpicam-apps")
        XCTAssertEqual(value("AeExposureMode", in: p), [1])
        XCTAssertEqual(value("AeFlickerPeriod", in: p), [8_333])
        // The Pi has no automatic flicker detection (AeFlickerMode tops out at Manual): said, not sent.
        p = plan { $0.exposure.flicker = .auto }
        XCTAssertNil(value("AeFlickerMode", in: p))
        XCTAssertEqual(p.lacking.map(\.control), ["AeFlickerMode"])
        XCTAssertTrue(p.lacking[0].reason.contains("no automatic flicker detection"), p.lacking[0].reason)
        var auto = Self.imx708
        auto.flickerModeMaximum = 2
        XCTAssertEqual(value("AeFlickerMode", in: plan({ $0.exposure.flicker = .auto }, on: auto)), [2])
    }

    func testWhiteBalanceModeNumbersAndManualGains() {
        let expected: [CameraControls.WhiteBalance.Mode: Double] = [
            .auto: 0, .incandescent: 1, .tungsten: 2, .fluorescent: 3, .indoor: 4, .daylight: 5, .cloudy: 6,
        ]
        for (mode, number) in expected {
            let p = plan { $0.whiteBalance.mode = mode }
            XCTAssertEqual(value("AwbMode", in: p), [number], "\(mode)")
            XCTAssertEqual(value("AwbEnable", in: p), [1], "\(mode)")
            XCTAssertNil(value("ColourGains", in: p))
        }
        let p = plan { $0.whiteBalance.gains = [1.8, 1.5] }
        XCTAssertEqual(value("AwbEnable", in: p), [0])
        XCTAssertEqual(value("ColourGains", in: p), [1.8, 1.5])
    }

    /// zoom 2: the centred half of the crop area, in its coordinates.
    func testZoomIsACentredScalerCropOfTheCropArea() throws {
        XCTAssertEqual(value("ScalerCrop", in: plan { $0.zoom = 2 }), [1152, 648, 2304, 1296])
        XCTAssertEqual(value("ScalerCrop", in: plan { $0.zoom = 4 }), [1728, 972, 1152, 648])
        // A crop area that does not start at the origin (a binned or cropped sensor mode).
        var moved = Self.imx708
        moved.cropMaximum = PixelRect(x: 16, y: 8, width: 2000, height: 1000)
        XCTAssertEqual(value("ScalerCrop", in: plan({ $0.zoom = 2 }, on: moved)), [516, 258, 1000, 500])
        // Region of interest, as rpicam-apps --roi (scaled, then moved by the crop area's origin).
        XCTAssertEqual(value("ScalerCrop", in: plan({ $0.roi = [0.25, 0.25, 0.5, 0.5] }, on: moved)),
                       [516, 258, 1000, 500])
        // Zoom inside the region: its centred half.
        XCTAssertEqual(value("ScalerCrop", in: plan { $0.roi = [0, 0, 0.5, 0.5]; $0.zoom = 2 }),
                       [576, 324, 1152, 648])
        XCTAssertNil(value("ScalerCrop", in: plan { _ in }), "no zoom asked: the pipeline's own crop")
    }

    func testFocusModesWindowAndLensPosition() {
        var p = plan { $0.focus.range = .macro; $0.focus.speed = .fast }
        XCTAssertEqual(value("AfMode", in: p), [2], "continuous by default")
        XCTAssertEqual(value("AfRange", in: p), [1])
        XCTAssertEqual(value("AfSpeed", in: p), [1])
        XCTAssertEqual(value("AfWindows", in: p), [], "no window: AfMetering back to Auto")
        XCTAssertNil(value("LensPosition", in: p), "continuous: the lens is the algorithm's")
        p = plan { $0.focus.mode = .auto; $0.focus.window = [0.25, 0.25, 0.5, 0.5] }
        XCTAssertEqual(value("AfMode", in: p), [1])
        XCTAssertEqual(value("AfWindows", in: p), [1152, 648, 2304, 1296])
        p = plan { $0.focus.mode = .manual }
        XCTAssertEqual(value("AfMode", in: p), [0])
        XCTAssertEqual(value("LensPosition", in: p), [1], "manual without a position: the tuning's default")
        p = plan { $0.focus.lensPosition = 2.5 }
        XCTAssertEqual(value("AfMode", in: p), [0], "a lens position means manual focus")
        XCTAssertEqual(value("LensPosition", in: p), [2.5])
        let afMode = p.settings.firstIndex { $0.name == "AfMode" }!
        let lens = p.settings.firstIndex { $0.name == "LensPosition" }!
        XCTAssertLessThan(afMode, lens)
        // A still keeps the lens where the press's autofocus put it; in manual focus it is set.
        XCTAssertNil(value("AfMode", in: plan({ _ in }, role: .still)))
        XCTAssertNil(value("AfMode", in: plan({ $0.focus.mode = .auto }, role: .still)))
        XCTAssertEqual(value("LensPosition", in: plan({ $0.focus.lensPosition = 3 }, role: .still)), [3])
        XCTAssertEqual(value("AfMode", in: plan({ $0.focus.lensPosition = 3 }, role: .still)), [0])
    }

    /// `shutterctl focus 0.3 0.8`: its window reaches AfWindows (the shim sets
    /// AfMetering Windows with it); the exposure half has no libcamera control
    /// and is reported as lacking, with why, never dropped.
    func testAPointOfInterestGivesAfWindowsAndAnHonestLackingExposureWindow() throws {
        let window = try PointOfInterest(x: 0.3, y: 0.8).window(controls: CameraControls())
        XCTAssertEqual(window, [0.2375, 0.7375, 0.125, 0.125])
        let p = plan { $0.focus.window = window; $0.exposure.window = window }
        print("point 0.3, 0.8 on imx708: AfWindows \(value("AfWindows", in: p) ?? []), lacking \(p.lacking)")
        XCTAssertEqual(value("AfWindows", in: p), [1094, 1912, 576, 324], "in ScalerCrop pixels of the crop area")
        XCTAssertEqual(p.lacking.map(\.control), ["AeMeteringWindow"])
        let lacking = try XCTUnwrap(p.lacking.first)
        XCTAssertEqual(lacking.keys, ["camera.exposure.window"])
        XCTAssertTrue(lacking.reason.contains("libcamera has no control for an exposure metering window"), lacking.reason)
        XCTAssertEqual(value("AeMeteringMode", in: p), [0], "the metering mode is still set (centre-weighted)")
        XCTAssertFalse(p.settings.contains { $0.name.hasPrefix("AeMeteringWindow") }, "nothing invented for libcamera")
        // Without a window nothing is lacking; on a fixed-focus camera the focus half is lacking too.
        XCTAssertEqual(plan { $0.focus.window = window }.lacking, [])
        let fixed = LibcameraControlSupport(names: Set(LibcameraControlSupport.knownNames).subtracting(
            ["AfMode", "AfRange", "AfSpeed", "AfMetering", "AfWindows", "LensPosition"]))
        XCTAssertEqual(Set(plan({ $0.focus.window = window; $0.exposure.window = window }, on: fixed).lacking.map(\.control)),
                       ["AeMeteringWindow", "AfWindows"])
    }

    func testImageTuningAndDenoisePerRole() {
        let p = plan {
            $0.image.brightness = -0.25
            $0.image.contrast = 1.5
            $0.image.saturation = 0
            $0.image.sharpness = 2
        }
        XCTAssertEqual(value("Brightness", in: p), [-0.25])
        XCTAssertEqual(value("Contrast", in: p), [1.5])
        XCTAssertEqual(value("Saturation", in: p), [0])
        XCTAssertEqual(value("Sharpness", in: p), [2])
        // rpicam-apps: auto is cdn_fast for video, cdn_hq for stills.
        XCTAssertEqual(value("NoiseReductionMode", in: plan({ _ in }, role: .video)), [1])
        XCTAssertEqual(value("NoiseReductionMode", in: plan({ _ in }, role: .still)), [2])
        let modes: [CameraControls.Image.Denoise: Double] = [.off: 0, .cdnOff: 3, .cdnFast: 1, .cdnHQ: 2]
        for (d, n) in modes {
            XCTAssertEqual(value("NoiseReductionMode", in: plan({ $0.image.denoise = d }, role: .still)), [n], "\(d)")
        }
    }

    func testHDR() {
        XCTAssertEqual(value("HdrMode", in: plan { $0.hdr = .singleExp }), [3], "HdrModeSingleExposure")
        XCTAssertEqual(value("HdrMode", in: plan { $0.hdr = .auto }), [3])
        XCTAssertEqual(value("HdrMode", in: plan { _ in }), [0])
        // Sensor HDR is set before the open (SensorHDR): the plan follows what the opener did.
        var on = Self.imx708
        on.sensorHDR = .on(node: "/dev/v4l-subdev2")
        let sensor = plan({ $0.hdr = .sensor }, on: on)
        XCTAssertEqual(value("HdrMode", in: sensor), [0], "the sensor does it, not the ISP's single-exposure HDR")
        XCTAssertEqual(sensor.lacking, [])
        var without = Self.vimc
        without.sensorHDR = .lacking("the sensor Sensor B (/dev/v4l-subdev1) has no HDR mode")
        XCTAssertEqual(plan({ $0.hdr = .sensor }, on: without).lacking.map(\.description),
                       ["HdrMode: the sensor Sensor B (/dev/v4l-subdev1) has no HDR mode"])
        let notOpened = plan { $0.hdr = .sensor }
        XCTAssertNil(value("HdrMode", in: notOpened))
        XCTAssertTrue(notOpened.lacking.first?.reason.hasPrefix("the camera was opened without sensor HDR") == true,
                      "\(notOpened.lacking)")
    }

    /// On a camera without the controls, what was asked is reported with a
    /// reason; what was left at its default is just not sent.
    func testWhatTheCameraLacksIsReportedOnlyWhenAskedFor() {
        let quiet = plan({ _ in }, on: Self.vimc)
        XCTAssertEqual(quiet.lacking, [], "defaults ask nothing of a camera")
        XCTAssertEqual(Set(quiet.settings.map(\.name)), ["Brightness", "Contrast", "Saturation"])

        let p = plan({
            $0.exposure.shutterUs = 10_000
            $0.exposure.gain = 2
            $0.exposure.ev = 1
            $0.whiteBalance.mode = .daylight
            $0.whiteBalance.gains = [1.5, 1.5]
            $0.focus.mode = .auto
            $0.focus.window = [0.4, 0.4, 0.2, 0.2]
            $0.focus.lensPosition = 1
            $0.image.sharpness = 2
            $0.image.contrast = 1.5
            $0.zoom = 2
            $0.hdr = .singleExp
        }, on: Self.vimc)
        let reasons = Dictionary(uniqueKeysWithValues: p.lacking.map { ($0.control, $0.reason) })
        XCTAssertEqual(reasons["AfMode"], "this camera has no autofocus")
        XCTAssertEqual(reasons["AfWindows"], "this camera has no autofocus")
        XCTAssertEqual(reasons["LensPosition"], "this camera has no focus motor (fixed-focus lens)")
        XCTAssertEqual(reasons["HdrMode"], "not supported by this camera")
        XCTAssertEqual(reasons["ScalerCrop"], "this camera cannot crop (no digital zoom)")
        XCTAssertEqual(reasons["ExposureTime"], "this camera has no manual shutter")
        XCTAssertEqual(reasons["AnalogueGain"], "this camera has no manual gain")
        XCTAssertEqual(reasons["ColourGains"], "this camera has no manual white balance")
        XCTAssertNotNil(reasons["AwbMode"])
        XCTAssertNotNil(reasons["ExposureValue"])
        XCTAssertNotNil(reasons["Sharpness"])
        XCTAssertNil(reasons["Contrast"], "vimc has contrast")
        XCTAssertEqual(value("Contrast", in: p), [1.5])
        XCTAssertEqual(p.lacking.first { $0.control == "ScalerCrop" }?.keys, ["camera.zoom", "camera.roi"])
        XCTAssertEqual(p.lacking.first { $0.control == "AfMode" }?.description, "AfMode: this camera has no autofocus")
        XCTAssertEqual(Set(p.lacking.map(\.control)).count, p.lacking.count, "each control once")
    }

    func testDefaultSettingsMatchTheDesign() {
        let s = LibcameraCameraSettings()
        XCTAssertEqual(s.videoSizes, [CameraSize(width: 1920, height: 1080)])
        XCTAssertEqual(s.framesPerSecond, 30)
        XCTAssertEqual(s.videoFormats.first, .i420)
        XCTAssertEqual(s.autofocusTimeout, .milliseconds(300))
        XCTAssertEqual(s.controls.focus.mode, .continuous)
        XCTAssertTrue(s.stillSizes.isEmpty, "stills default to the full pixel array")
        XCTAssertLessThan(s.streamDepth, 4, "the stream must never hold every camera buffer")
    }
}
