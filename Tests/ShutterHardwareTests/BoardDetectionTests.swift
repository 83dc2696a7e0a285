// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
@testable import ShutterHardware

final class BoardDetectionTests: XCTestCase {
    func testRealModelStringsMapToProfiles() {
        let cases: [(String, String?)] = [
            ("Raspberry Pi 5 Model B Rev 1.0\u{0}", "rpi5"),
            ("Raspberry Pi 500 Rev 1.0\u{0}", "rpi5"),
            ("Raspberry Pi Compute Module 5 Rev 1.0\u{0}", "rpi5"),
            ("Raspberry Pi 4 Model B Rev 1.5\u{0}", "rpi4"),
            ("Raspberry Pi 400 Rev 1.0\u{0}", "rpi4"),
            ("Raspberry Pi Compute Module 4 Rev 1.0\u{0}", "rpi4"),
            ("Raspberry Pi 3 Model B Plus Rev 1.3\u{0}", "rpi3"),
            ("Raspberry Pi 3 Model A Plus Rev 1.0", "rpi3"),
            ("Raspberry Pi Zero 2 W Rev 1.0\u{0}", "zero2w"),
            ("Raspberry Pi Zero W Rev 1.1\u{0}", nil),
            ("Raspberry Pi 2 Model B Rev 1.1\u{0}", nil),
            ("Pine64 RockPro64 v2.1\u{0}", nil),
            ("", nil),
        ]
        for (model, expected) in cases {
            XCTAssertEqual(BoardDetection.boardID(forModel: model), expected, "model \(model.debugDescription)")
        }
    }

    func testDetectReadsTheInjectedModelFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("board-\(getpid())-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = dir.appendingPathComponent("model")
        // The device tree stores the string NUL-terminated, without a newline.
        try Data("Raspberry Pi 4 Model B Rev 1.4".utf8 + [0]).write(to: model)
        XCTAssertEqual(BoardDetection.detect(modelPath: model.path), "rpi4")
        try Data("Raspberry Pi Zero 2 W Rev 1.0".utf8 + [0]).write(to: model)
        XCTAssertEqual(BoardDetection.detect(modelPath: model.path), "zero2w")
    }

    func testMissingModelFileMeansNoBoard() {
        XCTAssertNil(BoardDetection.detect(modelPath: "/nonexistent/device-tree/model"))
    }

    func testThisMachineIsNotAPi() throws {
        // This x86 build machine has no device tree: auto must choose the simulated board.
        if FileManager.default.fileExists(atPath: BoardDetection.defaultModelPath) {
            throw XCTSkip("this machine has a device tree")
        }
        XCTAssertNil(BoardDetection.detect())
    }
}
