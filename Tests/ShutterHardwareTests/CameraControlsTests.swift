import ShutterCore
import XCTest
@testable import ShutterHardware

final class CameraControlsTests: XCTestCase {
    func testManualExposureSetsModesFirstOnNewLibcamera() {
        var c = CameraControls()
        c.exposure = .manual(shutterMicroseconds: 10_000, analogueGain: 2)
        let names = c.libcameraControls(hasModeControls: true).map(\.name)
        let t = try! XCTUnwrap(names.firstIndex(of: "ExposureTime"))
        let tm = try! XCTUnwrap(names.firstIndex(of: "ExposureTimeMode"))
        let g = try! XCTUnwrap(names.firstIndex(of: "AnalogueGain"))
        let gm = try! XCTUnwrap(names.firstIndex(of: "AnalogueGainMode"))
        XCTAssertLessThan(tm, t)
        XCTAssertLessThan(gm, g)
        XCTAssertFalse(names.contains("AeEnable"))
        let settings = c.libcameraControls(hasModeControls: true)
        XCTAssertEqual(settings[tm].values, [1])
        XCTAssertEqual(settings[t].values, [10_000])
    }

    func testManualExposureOnOldLibcameraUsesAeEnable() {
        var c = CameraControls()
        c.exposure = .manual(shutterMicroseconds: 20_000, analogueGain: nil)
        let s = c.libcameraControls(hasModeControls: false)
        XCTAssertEqual(s.first, ControlSetting(name: "AeEnable", values: [1]), "gain stays automatic")
        XCTAssertTrue(s.contains(ControlSetting(name: "ExposureTime", values: [20_000])))
        XCTAssertFalse(s.contains { $0.name == "ExposureTimeMode" })
        c.exposure = .manual(shutterMicroseconds: 20_000, analogueGain: 4)
        XCTAssertEqual(c.libcameraControls(hasModeControls: false).first, ControlSetting(name: "AeEnable", values: [0]))
    }

    func testDefaultSettingsMatchTheDesign() {
        let s = LibcameraCameraSettings()
        XCTAssertEqual(s.videoSizes, [CameraSize(width: 1920, height: 1080)])
        XCTAssertEqual(s.framesPerSecond, 30)
        XCTAssertEqual(s.videoFormats.first, .i420)
        XCTAssertEqual(s.autofocusTimeout, .milliseconds(300))
        XCTAssertEqual(s.videoAutofocus, .continuous)
        XCTAssertTrue(s.stillSizes.isEmpty, "stills default to the full pixel array")
        XCTAssertLessThan(s.streamDepth, 4, "the stream must never hold every camera buffer")
    }

    func testFlickerMeteringAndWhiteBalance() {
        var c = CameraControls()
        XCTAssertFalse(c.libcameraControls(hasModeControls: false).contains { $0.name.hasPrefix("AeFlicker") },
                       "flicker left to the camera when not configured")
        c.flicker = .period(microseconds: 10_000)
        c.metering = .spot
        c.exposureValue = -1
        c.whiteBalance = .manual(red: 1.8, blue: 1.5)
        let s = c.libcameraControls(hasModeControls: true)
        XCTAssertTrue(s.contains(ControlSetting(name: "AeFlickerMode", values: [1])))
        XCTAssertTrue(s.contains(ControlSetting(name: "AeFlickerPeriod", values: [10_000])))
        XCTAssertTrue(s.contains(ControlSetting(name: "AeMeteringMode", values: [1])))
        XCTAssertTrue(s.contains(ControlSetting(name: "ExposureValue", values: [-1])))
        XCTAssertTrue(s.contains(ControlSetting(name: "AwbEnable", values: [0])))
        XCTAssertTrue(s.contains(ControlSetting(name: "ColourGains", values: [1.8, 1.5])))
        c.whiteBalance = .daylight
        XCTAssertTrue(c.libcameraControls(hasModeControls: true).contains(ControlSetting(name: "AwbMode", values: [5])))
    }
}
