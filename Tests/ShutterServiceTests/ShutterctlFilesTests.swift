// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// `shutterctl files` and `shutterctl delete` against the real shutterd (issue 20 item 5):
/// the command line, the socket and the exit status; the rule itself is CardFilesTests'.
final class ShutterctlFilesTests: XCTestCase {
    func testFilesNewestFirstAndDeleteLast() throws {
        let d = try DaemonHarness()
        try d.start()
        defer { d.stop() }
        for _ in 0..<3 { XCTAssertEqual(try d.ctl("tap").0, 0) }
        let photos = d.files("JPG")
        XCTAssertEqual(photos.count, 3)

        let (code, listing) = try d.ctl("files")
        XCTAssertEqual(code, 0)
        let items = try XCTUnwrap(listing?["items"] as? [[String: Any]], "\(String(describing: listing))")
        XCTAssertEqual(items.compactMap { $0["name"] as? String },
                       photos.map { ($0 as NSString).lastPathComponent }.reversed(), "newest first")
        XCTAssertEqual(items.compactMap { $0["number"] as? Int }, [1000003, 1000002, 1000001])
        XCTAssertEqual(Set(items.compactMap { $0["kind"] as? String }), ["photo"])
        XCTAssertTrue(items.allSatisfy { ($0["bytes"] as? Int ?? 0) > 0 && $0["modified"] is String }, "\(items)")

        let (deleted, reply) = try d.ctl("delete", "last")
        XCTAssertEqual(deleted, 0, "\(String(describing: reply))")
        XCTAssertEqual((reply?["deleted"] as? [String: Any])?["name"] as? String, "SHTR0003.JPG")
        XCTAssertEqual(d.files("JPG"), Array(photos.prefix(2)), "the last photo is gone, nothing else")

        XCTAssertEqual(try d.ctl("record", "start").0, 0)
        let (refused, why) = try d.ctl("delete", "last")
        XCTAssertEqual(refused, 1, "refused while a clip is recording")
        let error = why?["error"] as? String ?? ""
        XCTAssertTrue(error.hasPrefix("busy: recording SHTR0004.MP4"), error)
        XCTAssertEqual(d.files("JPG"), Array(photos.prefix(2)))
        XCTAssertEqual(try d.ctl("record", "stop").0, 0)

        XCTAssertEqual(try d.ctl("delete", "1000001").0, 0)
        XCTAssertEqual(d.files("JPG"), [photos[1]])
        XCTAssertEqual(try d.ctl("delete", "1000001").0, 1, "gone already")
        XCTAssertEqual(try d.ctl("delete", "SHTR0002.JPG").0, 64, "a number or last, else usage")
    }
}
