// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterControl
import ShutterCore
import XCTest

/// A clip's creation time is its first frame's exposure start in UTC, written only when
/// the wall clock is trusted: the photos' rule (no date beats 1904 or 1970). The service
/// in process on the manual clock, with a wall clock the test sets.
final class ClipDateTests: XCTestCase {
    /// 2026-07-08T09:10:11Z.
    static let wall = WallTime(secondsSinceEpoch: 1_783_501_811, utcOffsetSeconds: 3600, isTrusted: true)

    func testATrustedClockDatesTheClipAtItsFirstFrame() async throws {
        let r = try await InProcessRig.start(self, wallClock: FixedWallClock(Self.wall))
        let clip = try await hold(r)
        let date = try XCTUnwrap(try createDate(clip), "a creation time")
        // The wall clock stands still while the manual clock runs: the first frame was
        // exposed a moment (the press, its frame) before the file was opened.
        let parsed = try XCTUnwrap(Self.seconds(date), date)
        print("clip CreateDate \(date) UTC; wall clock at the file's opening 2026:07:08 09:10:11")
        XCTAssertLessThanOrEqual(parsed, Self.wall.secondsSinceEpoch)
        XCTAssertGreaterThanOrEqual(parsed, Self.wall.secondsSinceEpoch - 2, "UTC, not local time (+01:00)")
    }

    func testAnUntrustedClockLeavesTheDateOut() async throws {
        var untrusted = Self.wall
        untrusted.isTrusted = false
        let r = try await InProcessRig.start(self, wallClock: FixedWallClock(untrusted))
        let clip = try await hold(r)
        XCTAssertNil(try createDate(clip), "no creation time from an untrusted clock")
    }

    private func hold(_ r: InProcessRig) async throws -> String {
        let reply = try await r.ask(ControlRequest(cmd: "hold", seconds: 1.5))
        XCTAssertTrue(reply.ok, "\(reply)")
        return try XCTUnwrap(reply.files?.first)
    }

    /// exiftool's CreateDate (the mvhd's), nil when zero.
    private func createDate(_ path: String) throws -> String? {
        let (_, out, _) = try runTool("exiftool", ["-n", "-j", "-CreateDate", path])
        let list = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [[String: Any]]
        guard let d = list?.first?["CreateDate"] as? String, !d.hasPrefix("0000") else { return nil }
        return d
    }

    /// "2026:07:08 09:10:11" as seconds since 1970 (UTC).
    static func seconds(_ s: String) -> Int64? {
        let n = s.split(whereSeparator: { $0 == ":" || $0 == " " }).compactMap { Int32($0) }
        guard n.count == 6 else { return nil }
        var t = tm()
        (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec) = (n[0] - 1900, n[1] - 1, n[2], n[3], n[4], n[5])
        return Int64(timegm(&t))
    }
}
