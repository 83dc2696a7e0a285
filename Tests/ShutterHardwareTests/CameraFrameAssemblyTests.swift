// SPDX-License-Identifier: BSD-2-Clause
import CLibcameraShim
import ShutterCore
import XCTest
@testable import ShutterHardware

final class CameraFrameAssemblyTests: XCTestCase {
    private func stream(_ format: PixelFormat, _ w: Int, _ h: Int, stride: Int) -> GrantedStream {
        GrantedStream(size: CameraSize(width: w, height: h), format: format, stride: stride, bufferCount: 4,
                      exact: true, transformGranted: true, libcameraDescription: "")
    }

    func testSinglePlaneI420IsSplitByStride() {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64 * 48 * 3 / 2, alignment: 64)
        defer { buffer.deallocate() }
        let base = UnsafePointer(buffer.assumingMemoryBound(to: UInt8.self))
        let planes = CameraFrameAssembly.planes(bases: [base], lengths: [64 * 48 * 3 / 2],
                                                stream: stream(.i420, 60, 48, stride: 64))
        XCTAssertEqual(planes.count, 3)
        XCTAssertEqual(planes.map(\.stride), [64, 32, 32])
        XCTAssertEqual(planes.map(\.length), [64 * 48, 32 * 24, 32 * 24])
        XCTAssertEqual(planes[1].base - UnsafeRawPointer(base), 64 * 48)
        XCTAssertEqual(planes[2].base - UnsafeRawPointer(base), 64 * 48 + 32 * 24)
    }

    func testFourCCMapping() {
        XCTAssertEqual(CameraFourCC.name(CameraFourCC.fourcc(for: .i420)), "YU12")
        XCTAssertEqual(CameraFourCC.name(CameraFourCC.fourcc(for: .bgr24)), "RG24")
        for f in PixelFormat.allCases {
            XCTAssertEqual(CameraFourCC.format(for: CameraFourCC.fourcc(for: f)), f)
        }
        XCTAssertNil(CameraFourCC.format(for: CameraFourCC.code("M", "J", "P", "G")))
    }

    /// A frame as the shim fills it from a Raspberry Pi's metadata: every field
    /// reaches FrameMetadata, the zoom as the crop area's width over the crop's.
    func testMetadataFromAFilledShimFrame() {
        var f = shc_frame()
        f.has_exposure_time = 1; f.exposure_time_us = 10000
        f.has_analogue_gain = 1; f.analogue_gain = 2.5
        f.has_digital_gain = 1; f.digital_gain = 1.25
        f.has_lux = 1; f.lux = 400
        f.has_colour_temperature = 1; f.colour_temperature = 5200
        f.has_af_state = 1; f.af_state = 2
        f.has_lens_position = 1; f.lens_position = 1.5
        f.has_colour_gains = 1; f.colour_gains = (1.75, 2.25)
        f.has_exposure_value = 1; f.exposure_value = -1.5
        f.has_awb_enable = 1; f.awb_enable = 1
        f.has_scaler_crop = 1; f.scaler_crop = (1152, 648, 2304, 1296); f.scaler_crop_maximum = (0, 0, 4608, 2592)
        let m = CameraFrameAssembly.metadata(from: f, whiteBalance: CameraControls.WhiteBalance())
        XCTAssertEqual(m.exposureTimeMicroseconds, 10000)
        XCTAssertEqual(m.analogueGain, 2.5)
        XCTAssertEqual(m.digitalGain, 1.25)
        XCTAssertEqual(m.lux, 400)
        XCTAssertEqual(m.colourTemperature, 5200)
        XCTAssertEqual(m.autofocusState, .focused)
        XCTAssertEqual(m.lensPosition, 1.5)
        XCTAssertEqual(m.colourGains, [1.75, 2.25])
        XCTAssertEqual(m.exposureValue, -1.5)
        XCTAssertEqual(m.autoWhiteBalance, true)
        XCTAssertEqual(m.digitalZoomRatio, 2)

        var daylight = CameraControls.WhiteBalance()
        daylight.mode = .daylight
        XCTAssertEqual(CameraFrameAssembly.metadata(from: f, whiteBalance: daylight).autoWhiteBalance, false,
                       "AWB running within a preset's range is a preset, EXIF's manual white balance")
        f.awb_enable = 0
        XCTAssertEqual(CameraFrameAssembly.metadata(from: f, whiteBalance: CameraControls.WhiteBalance()).autoWhiteBalance,
                       false, "fixed colour gains")
    }

    /// What the frame did not report stays unknown: nothing is guessed.
    func testMetadataLeavesUnreportedFieldsNil() {
        var f = shc_frame()
        f.has_scaler_crop = 1; f.scaler_crop = (0, 0, 1920, 1080)  // no crop maximum known
        XCTAssertEqual(CameraFrameAssembly.metadata(from: f, whiteBalance: CameraControls.WhiteBalance()), FrameMetadata())
        XCTAssertEqual(CameraFrameAssembly.zoomRatio(cropWidth: 4609, maximumWidth: 4608), 1, "never below 1")
    }

    func testAutofocusStateMapping() {
        XCTAssertEqual((0...3).map { CameraFrameAssembly.autofocusState(Int32($0)) }, [.idle, .scanning, .focused, .failed])
    }
}
