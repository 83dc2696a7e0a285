// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import XCTest
@testable import ShutterHardware

final class CameraSelectionTests: XCTestCase {
    private let pi5 = [
        LibcameraCameraDescription(id: "/base/axi/pcie@120000/rp1/i2c@88000/imx708@1a", model: "imx708_wide",
                                   location: .back, rotation: 180, pixelArraySize: CameraSize(width: 4608, height: 2592),
                                   hasAutofocus: true, lensPositionRange: 0...32, defaultLensPosition: 1),
        LibcameraCameraDescription(id: "/base/axi/pcie@120000/rp1/i2c@80000/imx219@10", model: "imx219",
                                   location: .front),
        LibcameraCameraDescription(id: "\\_SB_.PCI0-2:1.0-046d:0825", model: "", location: .external),
    ]

    func testParsing() {
        XCTAssertEqual(CameraSelector(parsing: ""), .first)
        XCTAssertEqual(CameraSelector(parsing: "auto"), .first)
        XCTAssertEqual(CameraSelector(parsing: "1"), .index(1))
        XCTAssertEqual(CameraSelector(parsing: "Back"), .location(.back))
        XCTAssertEqual(CameraSelector(parsing: "id:i2c@88000"), .idContaining("i2c@88000"))
        XCTAssertEqual(CameraSelector(parsing: " imx477 "), .model("imx477"))
        XCTAssertEqual(CameraSelector(parsing: "-1"), .model("-1"))
    }

    func testSelection() {
        XCTAssertEqual(CameraSelector.first.select(from: pi5), 0)
        XCTAssertEqual(CameraSelector.first.select(from: []), nil)
        XCTAssertEqual(CameraSelector.index(2).select(from: pi5), 2)
        XCTAssertEqual(CameraSelector.index(3).select(from: pi5), nil)
        XCTAssertEqual(CameraSelector.model("imx219").select(from: pi5), 1)
        XCTAssertEqual(CameraSelector.model("IMX708").select(from: pi5), 0, "prefix matches imx708_wide")
        XCTAssertEqual(CameraSelector.model("ov5647").select(from: pi5), nil)
        XCTAssertEqual(CameraSelector.location(.front).select(from: pi5), 1)
        XCTAssertEqual(CameraSelector.location(.external).select(from: pi5), 2)
        XCTAssertEqual(CameraSelector.idContaining("i2c@80000").select(from: pi5), 1)
    }

    func testNoDeviceMessageListsWhatWasFoundAndInaccessibleNodes() {
        let nodes = [CameraDeviceNode(path: "/dev/media0", accessible: false),
                     CameraDeviceNode(path: "/dev/video0", accessible: true)]
        let e = CameraError.noDevice(selector: .model("imx477"), found: pi5, libcameraVersion: "v0.4.0", nodes: nodes)
        XCTAssertEqual(e.code, .noDevice)
        XCTAssertTrue(e.message.contains("no camera matches model \"imx477\""), e.message)
        XCTAssertTrue(e.message.contains("found 3"), e.message)
        XCTAssertTrue(e.message.contains("#0 imx708_wide (back) /base/axi/pcie@120000/rp1/i2c@88000/imx708@1a"), e.message)
        XCTAssertTrue(e.message.contains("/dev/media0 (no access), /dev/video0"), e.message)
        XCTAssertTrue(e.message.contains("'video' group"), e.message)
        XCTAssertTrue(e.message.contains("Or choose one that exists"), e.message)
    }

    func testDeviceNodeScanListsOnlyCameraNodes() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("shutter-dev-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["video1", "media0", "ttyS0", "video0"] {
            XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/" + name, contents: nil))
        }
        let nodes = CameraDeviceNodes.scan(devDirectory: dir)
        XCTAssertEqual(nodes.map(\.path), ["media0", "video0", "video1"].map { dir + "/" + $0 })
        XCTAssertTrue(nodes.allSatisfy(\.accessible))
        XCTAssertEqual(CameraDeviceNodes.summary([]), "no /dev/media* or /dev/video* nodes exist")
    }

    func testShimErrorsMapToCodes() {
        XCTAssertEqual(CameraError.fromShim(-ENODEV, "x").code, .disconnected)
        XCTAssertEqual(CameraError.fromShim(-EBUSY, "x").code, .busy)
        XCTAssertEqual(CameraError.fromShim(-EINVAL, "x").code, .rejected)
        XCTAssertEqual(CameraError.fromShim(-ENOTSUP, "x").code, .unsupported)
        XCTAssertEqual(CameraError.fromShim(-EIO, "x").code, .system)
        XCTAssertEqual(CameraError.fromShim(-EIO, "x").errno, EIO)
    }
}
