// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import ShutterPassword
import ShutterWeb
import Synchronization
import XCTest
@testable import ShutterService

/// Who may watch over RTSP: a token (revocable at once) or the page's password; wrong
/// guesses slow down only the address they come from (a manual clock: no sleeping).
final class LiveAccessTests: XCTestCase {
    func testTokensThePasswordAndGuessesSlowOnlyTheirAddress() throws {
        let dir = try DaemonHarness.makeTempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let tokens = WebTokens(root: dir)
        var config = ShutterConfig()
        config.web.passwordHash = try XCTUnwrap(PasswordHash.make("right one"))
        let now = Mutex(1000.0)
        let accepts = LiveSetup.accepts(config: config, tokens: tokens,
                                        throttle: LoginThrottle(now: { now.withLock { $0 } }))
        let view = try tokens.add(name: "nvr", scope: "view").token
        XCTAssertTrue(accepts(view, "10.0.0.1"))
        XCTAssertFalse(accepts(view + "\0junk", "10.0.0.1"), "a NUL ends nothing: the token with junk is refused")
        XCTAssertTrue(accepts(view, "10.0.0.1"), "a token is checked even while its address waits")
        _ = try tokens.revoke(name: "nvr")
        XCTAssertFalse(accepts(view, "10.0.0.1"), "revoked: refused at once")

        // The guesser waits; the owner at another address does not.
        XCTAssertFalse(accepts("a guess", "10.0.0.9"))
        XCTAssertFalse(accepts("right one", "10.0.0.9"), "within a second of a guess: not even tried")
        XCTAssertTrue(accepts("right one", "10.0.0.2"), "another address is not slowed")
        now.withLock { $0 += 1.1 }
        XCTAssertTrue(accepts("right one", "10.0.0.9"), "the guesser's address once its second has passed")
        XCTAssertTrue(accepts("right one", "10.0.0.9"), "remembered: no second Argon2id")
        for i in 0..<10 {
            now.withLock { $0 += 0.1 }
            XCTAssertFalse(accepts("guess \(i)", "10.0.0.9"))
            XCTAssertTrue(accepts("right one", "10.0.0.2"), "the owner, guess \(i)")
        }
        XCTAssertFalse(accepts("right one", "10.0.0.9"), "ten guesses in a second: the guesser waits")
        XCTAssertFalse(accepts("right one\0", "10.0.0.2"), "a NUL after the password is refused")
    }
}
