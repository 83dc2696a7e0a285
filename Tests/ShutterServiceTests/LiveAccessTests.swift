// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import ShutterPassword
import ShutterWeb
import XCTest
@testable import ShutterService

/// Who may watch over RTSP: a token (revocable at once) or the page's password, with
/// at most one password tried a second.
final class LiveAccessTests: XCTestCase {
    func testTokensThePasswordAndOneGuessASecond() throws {
        let dir = try DaemonHarness.makeTempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let tokens = WebTokens(root: dir)
        var config = ShutterConfig()
        config.web.passwordHash = try XCTUnwrap(PasswordHash.make("right one"))
        let accepts = LiveSetup.accepts(config: config, tokens: tokens)
        let view = try tokens.add(name: "nvr", scope: "view").token
        XCTAssertTrue(accepts(view))
        _ = try tokens.revoke(name: "nvr")
        XCTAssertFalse(accepts(view), "revoked: refused at once")
        XCTAssertFalse(accepts("a guess"))
        XCTAssertFalse(accepts("right one"), "within a second of a guess: not even tried")
        Thread.sleep(forTimeInterval: 1.1)
        XCTAssertTrue(accepts("right one"))
        XCTAssertTrue(accepts("right one"), "remembered: no second Argon2id")
    }
}
