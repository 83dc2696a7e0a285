// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import XCTest
@testable import ShutterHardware

/// Finding a camera's sensor among the V4L2 subdevices as rpicam-apps does
/// (`--hdr sensor`), on a sysfs tree laid out as the kernel lays it out: this
/// machine has no camera sensor, so the tree is made here.
final class SensorHDRTests: XCTestCase {
    private var root = ""

    override func setUpWithError() throws {
        root = try DaemonDir.make()
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// v4l-subdevN with its name and, on a Pi, device/of_node -> the sensor's device-tree node.
    private func subdev(_ n: Int, name: String, ofNode: String? = nil) throws {
        let dir = "\(root)/sys/v4l-subdev\(n)"
        try FileManager.default.createDirectory(atPath: dir + "/device", withIntermediateDirectories: true)
        try (name + "\n").write(toFile: dir + "/name", atomically: true, encoding: .utf8)
        if let ofNode {
            try FileManager.default.createSymbolicLink(atPath: dir + "/device/of_node",
                                                       withDestinationPath: "../../../../firmware/devicetree" + ofNode)
        }
    }

    func testAPiSensorIsFoundByItsDeviceTreeNode() throws {
        try subdev(0, name: "rp1-cfe-csi2_ch0")
        try subdev(2, name: "imx708", ofNode: "/base/axi/pcie@120000/rp1/i2c@88000/imx708@1a")
        try subdev(10, name: "imx219", ofNode: "/base/axi/pcie@120000/rp1/i2c@80000/imx219@10")
        let id = "/base/axi/pcie@120000/rp1/i2c@88000/imx708@1a"
        XCTAssertEqual(SensorSubdevice.find(cameraID: id, sysfs: root + "/sys", dev: "/dev"),
                       SensorSubdevice(node: "/dev/v4l-subdev2", name: "imx708"))
        XCTAssertEqual(SensorSubdevice.find(cameraID: "/base/axi/pcie@120000/rp1/i2c@80000/imx219@10",
                                            sysfs: root + "/sys")?.node, "/dev/v4l-subdev10")
    }

    func testAVimcSensorIsFoundByItsEntityName() throws {
        try subdev(0, name: "Debayer A")
        try subdev(1, name: "Sensor B")
        try subdev(3, name: "Sensor A")
        XCTAssertEqual(SensorSubdevice.find(cameraID: "platform/vimc.0 Sensor B", sysfs: root + "/sys")?.node,
                       "/dev/v4l-subdev1")
        XCTAssertNil(SensorSubdevice.find(cameraID: "platform/vimc.0 Sensor C", sysfs: root + "/sys"))
    }

    /// Asked for, a camera whose sensor cannot is reported with why; off asks nothing of it.
    func testWithoutASensorOrItsControlSensorHDRIsLackingWithAReason() throws {
        guard case .lacking(let none) = SensorHDR.set(on: true, cameraID: "usb-cam", sysfs: root + "/sys") else {
            return XCTFail("no subdevice: lacking")
        }
        XCTAssertTrue(none.hasPrefix("no V4L2 sensor subdevice of camera usb-cam found in \(root)/sys"), none)
        XCTAssertEqual(SensorHDR.set(on: false, cameraID: "usb-cam", sysfs: root + "/sys"), .off)

        // A node that is not a V4L2 device (the ioctl is refused): lacking, naming the node and the error.
        try subdev(1, name: "Sensor B")
        try Data().write(to: URL(fileURLWithPath: root + "/v4l-subdev1"))
        let state = SensorHDR.set(on: true, cameraID: "platform/vimc.0 Sensor B", sysfs: root + "/sys", dev: root)
        guard case .lacking(let why) = state else { return XCTFail("\(state)") }
        XCTAssertTrue(why.hasPrefix("cannot set the HDR control of the sensor Sensor B on \(root)/v4l-subdev1: "), why)
        XCTAssertEqual(SensorHDR.set(on: false, cameraID: "platform/vimc.0 Sensor B", sysfs: root + "/sys", dev: root), .off)
    }
}

private enum DaemonDir {
    static func make() throws -> String {
        var template = Array("/tmp/shutter-sensorhdr-XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { throw NSError(domain: "mkdtemp", code: Int(errno)) }
        return String(cString: p)
    }
}
