// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
@testable import ShutterCore

/// PlainJSON writes what JSONEncoder wrote with [.sortedKeys, .withoutEscapingSlashes]
/// (and .prettyPrinted) and reads what JSONDecoder read (issue 31: the static shutterctl
/// carries neither).
final class PlainJSONTests: XCTestCase {
    struct Keys: Codable, Equatable {
        var notFound = 1, note = 2, a = 3, B = 4, _x = 5, a1 = 6, a10 = 7, a2 = 8, Zed = 9, zed = 10
    }

    struct Values: Codable, Equatable {
        var d: [Double] = [1.0, 0.1, 1e-7, 1e21, 123_456_789_012.5, -0.0, 2.5e-5, 1e16, 100, 0.1 + 0.2, -3.75]
        var f: Float = 0.1
        var s = "a/b\"c\\d\n\t\r\u{8}\u{c}\u{1}\u{1f}\u{7f}é😀\u{2028}"
        var empty: [Int] = []
        var none: [String: Int] = [:]
        var missing: Int?
        var present: String? = "x"
        var big: UInt64 = 1_844_674_407_370_955_161
        var small: Int8 = -5
        var nested: [String: [Int]] = ["x": [1, 2], "y": []]
        var objects: [[String: Bool]] = [[:], ["t": true, "f": false]]
        var nothing: Nothing = Nothing()
    }

    /// Encodes no value at all: JSONEncoder writes an empty object for it.
    struct Nothing: Codable, Equatable {
        init() {}
        init(from decoder: any Decoder) throws {}
        func encode(to encoder: any Encoder) throws {}
    }

    private func foundation(_ value: some Encodable, pretty: Bool) throws -> String {
        let e = JSONEncoder()
        e.outputFormatting = pretty ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted] : [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try e.encode(value), as: UTF8.self)
    }

    private func plain(_ value: some Encodable, pretty: Bool) throws -> String {
        String(decoding: try PlainJSON.encode(value, pretty: pretty), as: UTF8.self)
    }

    func testEncodesAsJSONEncoder() throws {
        for pretty in [false, true] {
            XCTAssertEqual(try plain(Keys(), pretty: pretty), try foundation(Keys(), pretty: pretty))
            XCTAssertEqual(try plain(Values(), pretty: pretty), try foundation(Values(), pretty: pretty))
            XCTAssertEqual(try plain(ShutterConfig(), pretty: pretty), try foundation(ShutterConfig(), pretty: pretty))
            XCTAssertEqual(try plain(["k": JSONValue.double(50)], pretty: pretty), try foundation(["k": JSONValue.double(50)], pretty: pretty))
        }
        XCTAssertThrowsError(try PlainJSON.encode([Double.nan]))
    }

    func testDecodesAsJSONDecoder() throws {
        for value in [try plain(Values(), pretty: false), try foundation(ShutterConfig(), pretty: true)] {
            if value.hasPrefix("{\"big\"") {
                XCTAssertEqual(try PlainJSON.decode(Values.self, from: value), try JSONDecoder().decode(Values.self, from: Data(value.utf8)))
            } else {
                XCTAssertEqual(try PlainJSON.decode(ShutterConfig.self, from: value),
                               try JSONDecoder().decode(ShutterConfig.self, from: Data(value.utf8)))
            }
        }
        // What JSONDecoder refuses, PlainJSON refuses: a missing key, a wrong type, a
        // number too big for its type, a fraction for an integer, not JSON at all.
        XCTAssertThrowsError(try PlainJSON.decode(Keys.self, from: "{}"))
        XCTAssertThrowsError(try PlainJSON.decode([Int].self, from: "[\"1\"]"))
        XCTAssertThrowsError(try PlainJSON.decode([Int8].self, from: "[300]"))
        XCTAssertThrowsError(try PlainJSON.decode([Int].self, from: "[1.5]"))
        XCTAssertThrowsError(try PlainJSON.decode([Int].self, from: "[1,"))
        XCTAssertEqual(try PlainJSON.decode([Double].self, from: "[1, 2.5, -0]"), [1, 2.5, 0])
        XCTAssertEqual(try PlainJSON.decode([String: Int?].self, from: "{\"a\": null}"), ["a": nil])
    }
}
