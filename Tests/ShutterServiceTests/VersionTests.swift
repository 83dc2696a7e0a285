// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterBuild
import ShutterCore
import XCTest

/// One version (deploy/version.sh, stamped by make) everywhere a person or a program
/// looks for it: --version of both programs, the first log line, status.version, EXIF
/// Software of every photo (issue 21).
final class VersionTests: XCTestCase {
    func testBothProgramsPrintTheStampedVersion() throws {
        // make stamps it (deploy/version.sh); `swift build` alone in a fresh clone has none.
        XCTAssertTrue(ShutterVersion.string == "unknown" || ShutterVersion.string.first!.isNumber, ShutterVersion.string)
        for program in ["shutterd", "shutterctl"] {
            let (code, out, err) = try runTool(DaemonHarness.binDir + "/" + program, ["--version"])
            XCTAssertEqual(code, 0, err)
            XCTAssertEqual(out, "\(program) \(ShutterVersion.string)\n")
        }
    }

    func testTheLogStatusAndEXIFSoftwareNameTheVersion() throws {
        let d = try DaemonHarness(config: #"{"still": {"moment": "focused"}}"#)
        try d.start()
        let first = d.log().split(separator: "\n").first.map(String.init) ?? ""
        XCTAssertTrue(first.hasSuffix("Shutter \(ShutterVersion.string) starting"), d.log())
        XCTAssertEqual(try d.status()["version"] as? String, ShutterVersion.string)
        let (code, reply) = try d.ctl("tap")
        XCTAssertEqual(code, 0, d.log())
        let path = try XCTUnwrap((reply?["files"] as? [String])?.first)
        let (_, software, _) = try runTool("exiftool", ["-s3", "-Software", path])
        XCTAssertEqual(software, "Shutter \(ShutterVersion.string)\n")
    }
}
