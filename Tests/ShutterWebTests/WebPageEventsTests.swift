// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// The page's handling of live events (state, file, deleted, setting, camera), its
/// fallback to polling and the camera switch, in Debian's headless chromium against a
/// stand-in server (Tests/web/test_page_events.py) that serves the page's files from the
/// repository: the page's own logic, apart from the service's.
final class WebPageEventsTests: XCTestCase {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    func testThePageFollowsTheServicesEvents() throws {
        for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw XCTSkip("\(tool) missing: deploy/install-deps.sh --test installs chromium, chromium-driver, python3-selenium")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [Self.repo.appendingPathComponent("Tests/web/test_page_events.py").path]
        var env = ProcessInfo.processInfo.environment
        env["PAGE_DIR"] = Self.repo.appendingPathComponent("Sources/ShutterWeb/Page").path
        p.environment = env
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        print(text)
        XCTAssertEqual(p.terminationStatus, 0, String(text.suffix(2000)))
        XCTAssertTrue(text.contains("checks passed"))
    }
}
