// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import XCTest

/// The one reading of request numbers (web query, header, JSON body; control socket).
final class RequestNumberTests: XCTestCase {
    let extremes = ["0", "-1", "9223372036854775807", "-9223372036854775808", "1e308", "NaN",
                    String(repeating: "1", count: 40), "", "384307168202282327"]

    func testTextIntegersAreBoundedOrRefused() throws {
        XCTAssertEqual(try RequestNumber.page.integer(text: "1"), 1)
        XCTAssertEqual(try RequestNumber.page.integer(text: "8999100"), 8_999_100)
        XCTAssertEqual(try RequestNumber.perPage.integer(text: "100"), 100)
        for bad in extremes + ["8999101", "1.5", "+1", " 1", "1 ", "0x10", "１", "1e2", "-", "--1", "inf", "nan"] {
            XCTAssertThrowsError(try RequestNumber.page.integer(text: bad), bad) { e in
                let m = (e as? RequestNumber.Refusal)?.message ?? ""
                XCTAssertTrue(m.hasPrefix("\"page\" must be a whole number from 1 to 8999100, not "), m)
            }
        }
        XCTAssertEqual(try RequestNumber.bytePosition.integer(text: "9223372036854775807"), Int.max)
        XCTAssertThrowsError(try RequestNumber.bytePosition.integer(text: "9223372036854775808"))
        XCTAssertThrowsError(try RequestNumber.bytePosition.integer(text: "-1"))
    }

    func testTextRealsAreFiniteAndBounded() throws {
        XCTAssertEqual(try RequestNumber.focusX.real(text: "0"), 0)
        XCTAssertEqual(try RequestNumber.focusX.real(text: "0.25"), 0.25)
        XCTAssertEqual(try RequestNumber.focusX.real(text: "1e-1"), 0.1)
        for bad in ["-1", "1e308", "NaN", "nan", "inf", "-inf", "", "0x1p-1", ".5", "5.", "1e", String(repeating: "1", count: 40)] {
            XCTAssertThrowsError(try RequestNumber.focusX.real(text: bad), bad)
        }
    }

    func testJSONNumbers() throws {
        XCTAssertEqual(try RequestNumber.holdSeconds.real(json: .int(3)), 3)
        XCTAssertEqual(try RequestNumber.holdSeconds.real(json: .double(3600)), 3600)
        for bad: JSONValue in [.int(0), .double(0), .int(-1), .int(.max), .int(.min), .double(1e308), .double(.nan),
                               .double(.infinity), .double(1.1e39), .string("3"), .string("NaN"), .string(""), .null,
                               .bool(true), .array([.int(1)])] {
            XCTAssertThrowsError(try RequestNumber.holdSeconds.real(json: bad), "\(bad)")
        }
        XCTAssertEqual(try RequestNumber.perPage.integer(json: .int(12)), 12)
        XCTAssertThrowsError(try RequestNumber.perPage.integer(json: .double(12)), "a fraction where a whole number is asked")
    }

    func testRefusalSaysWhatIsAllowed() {
        XCTAssertThrowsError(try RequestNumber.holdSeconds.real(json: .double(1e308))) { e in
            XCTAssertEqual((e as? RequestNumber.Refusal)?.message,
                           "\"seconds\" must be a number from 0 (not included) to 3600, not \"1e+308\": "
                           + "hold needs \"seconds\" above 0, e.g. {\"cmd\":\"hold\",\"seconds\":3}")
        }
        XCTAssertThrowsError(try RequestNumber.page.integer(text: String(repeating: "9", count: 60))) { e in
            let m = (e as? RequestNumber.Refusal)?.message ?? ""
            XCTAssertTrue(m.hasSuffix("…\""), "a long value is shortened: \(m)")
        }
        XCTAssertThrowsError(try RequestNumber.page.integer(text: "")) { e in
            XCTAssertTrue(((e as? RequestNumber.Refusal)?.message ?? "").hasSuffix("not empty"))
        }
    }

    /// A control request's number fields decode through the same bounds.
    func testDecodingAField() throws {
        struct Hold: Decodable {
            var seconds: Double?
            enum CodingKeys: String, CodingKey { case seconds }
            init(from decoder: any Decoder) throws {
                seconds = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(RequestNumber.holdSeconds, forKey: .seconds)
            }
        }
        XCTAssertEqual(try JSONDecoder().decode(Hold.self, from: Data(#"{"seconds":2.5}"#.utf8)).seconds, 2.5)
        XCTAssertNil(try JSONDecoder().decode(Hold.self, from: Data(#"{}"#.utf8)).seconds)
        XCTAssertNil(try JSONDecoder().decode(Hold.self, from: Data(#"{"seconds":null}"#.utf8)).seconds)
        for bad in ["9223372036854775807", "1e308", "-1", "0", "\"NaN\"", String(repeating: "1", count: 40)] {
            XCTAssertThrowsError(try JSONDecoder().decode(Hold.self, from: Data("{\"seconds\":\(bad)}".utf8)), bad) { e in
                XCTAssertTrue(e is RequestNumber.Refusal, "the refusal itself comes out of the decoder: \(e)")
            }
        }
    }
}
