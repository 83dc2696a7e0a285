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

    func testAutofocusStateMapping() {
        XCTAssertEqual((0...3).map { CameraFrameAssembly.autofocusState(Int32($0)) }, [.idle, .scanning, .focused, .failed])
    }
}
