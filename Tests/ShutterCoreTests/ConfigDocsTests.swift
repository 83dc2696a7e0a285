// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import XCTest

/// docs/configuration.md names every configuration key the schema declares
/// (`ConfigSchema.keys`), each in the first cell of a table row as `key`, and names no key
/// the schema lacks (a group such as `camera.exposure.*` must cover at least one key).
final class ConfigDocsTests: XCTestCase {
    /// Tests/ShutterCoreTests/ConfigDocsTests.swift: three levels up is the repository.
    static let doc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/configuration.md")

    /// Every `code` span in the first cell of every table row of the document.
    static func tableKeys(_ text: String) -> Set<String> {
        var names = Set<String>()
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) where line.hasPrefix("|") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
            guard cells.count > 2 else { continue }
            let parts = cells[1].split(separator: "`", omittingEmptySubsequences: false)
            // Odd-numbered parts lie between a pair of backticks.
            for (i, part) in parts.enumerated() where i % 2 == 1 && i < parts.count - 1 {
                names.insert(String(part))
            }
        }
        return names
    }

    func testEveryConfigurationKeyIsInTheDoc() throws {
        let text = try String(contentsOf: Self.doc, encoding: .utf8)
        let keys = ConfigSchema.keys.map(\.path)
        XCTAssertGreaterThan(keys.count, 50, "ConfigSchema.keys looks empty: the test would prove nothing")
        let named = Self.tableKeys(text)
        let missing = keys.filter { !named.contains($0) }
        for key in missing {
            XCTFail("docs/configuration.md has no table row naming `\(key)` (declared in ConfigSchema.keys): add one")
        }
    }

    func testTheDocNamesNoKeyTheSchemaLacks() throws {
        let text = try String(contentsOf: Self.doc, encoding: .utf8)
        let keys = ConfigSchema.keys.map(\.path)
        let looksLikeKey = try NSRegularExpression(pattern: "^[a-z]+(\\.[A-Za-z]+)+(\\.\\*)?$")
        for name in Self.tableKeys(text).sorted() {
            let range = NSRange(name.startIndex..., in: name)
            guard looksLikeKey.firstMatch(in: name, range: range) != nil else { continue }
            if name.hasSuffix(".*") {
                let prefix = String(name.dropLast())
                XCTAssertTrue(keys.contains { $0.hasPrefix(prefix) },
                              "docs/configuration.md names `\(name)`, which covers no key of ConfigSchema.keys")
            } else {
                XCTAssertTrue(keys.contains(name),
                              "docs/configuration.md names `\(name)`, which ConfigSchema.keys does not declare")
            }
        }
    }

    /// The reading above can fail: a document without a key's row is reported.
    func testAMissingRowIsSeen() {
        let named = Self.tableKeys("| key | x |\n| --- | --- |\n| `button.holdMs` | 1000 |\n| `a.b`, `c.d` | y |\n")
        XCTAssertEqual(named, ["button.holdMs", "a.b", "c.d"])
        XCTAssertFalse(named.contains("button.stabilityMs"))
    }
}
