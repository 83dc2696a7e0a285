// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
@testable import ShutterCore

/// ShutterCore's stand-ins for what FoundationEssentials lacks (issue 31: shutterctl
/// links no ICU): they must give what Foundation's calls gave.
final class PlainIOTests: XCTestCase {
    func testTrimmingMatchesFoundation() {
        let samples = ["", "   ", " a b ", "\t x\t", "\n\r x \u{2028}", "\u{00A0}1920x1080\u{3000}",
                       "\u{85}y\u{2029}", "e\u{301} ", " \u{301}z", "\u{0B}v\u{0C}", "no-trim"]
        for s in samples {
            XCTAssertEqual(s.trimmedSpaces, s.trimmingCharacters(in: .whitespaces), "\(s.unicodeScalars.map(\.value))")
            XCTAssertEqual(s.trimmedWhitespace, s.trimmingCharacters(in: .whitespacesAndNewlines),
                           "\(s.unicodeScalars.map(\.value))")
            XCTAssertEqual(s[...].trimmedSpaces, s.trimmingCharacters(in: .whitespaces))
        }
    }

    func testPathJoinsAsNSStringDoes() {
        for (dir, name) in [("/usr/share/shutter/boards", "pi5.json"), ("boards/", "sim.json"), ("", "x.json"), ("/", "y.json")] {
            XCTAssertEqual(PlainIO.path(dir, name), (dir as NSString).appendingPathComponent(name))
        }
    }

    func testReadFileGivesTheBytesOrTheSystemsReason() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("plainio-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("f.json").path
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        XCTAssertEqual(try PlainIO.readFile(file), bytes)
        XCTAssertEqual(PlainIO.isDirectory(file), false)
        XCTAssertEqual(PlainIO.isDirectory(dir.path), true)
        XCTAssertNil(PlainIO.isDirectory(dir.path + "/missing"))
        XCTAssertThrowsError(try PlainIO.readFile(dir.path + "/missing")) {
            XCTAssertEqual("\($0)", "No such file or directory")
        }
        XCTAssertThrowsError(try PlainIO.readFile(dir.path)) { XCTAssertEqual("\($0)", "Is a directory") }
    }

    func testAConfigFileThatIsADirectoryIsNamedSo() {
        XCTAssertThrowsError(try ConfigFile.read(path: "/tmp")) {
            XCTAssertEqual(($0 as? ConfigError)?.description.contains("this is a directory, not a JSON file"), true, "\($0)")
        }
        XCTAssertThrowsError(try ConfigFile.read(path: "/nonexistent/shutter.json")) {
            XCTAssertEqual(($0 as? ConfigError)?.description.contains("the file does not exist"), true, "\($0)")
        }
    }
}
