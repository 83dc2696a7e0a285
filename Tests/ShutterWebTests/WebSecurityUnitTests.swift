// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterStorage
@testable import ShutterWeb
import Synchronization
import XCTest

final class ByteRangeTests: XCTestCase {
    func testSingleRanges() {
        XCTAssertEqual(ByteRange.answer(nil, size: 100), .whole)
        XCTAssertEqual(ByteRange.answer("bytes=0-9", size: 100), .part(start: 0, end: 9))
        XCTAssertEqual(ByteRange.answer("bytes=90-", size: 100), .part(start: 90, end: 99))
        XCTAssertEqual(ByteRange.answer("bytes=90-500", size: 100), .part(start: 90, end: 99), "end clamped")
        XCTAssertEqual(ByteRange.answer("bytes=-10", size: 100), .part(start: 90, end: 99), "suffix")
        XCTAssertEqual(ByteRange.answer("bytes=-500", size: 100), .part(start: 0, end: 99))
        XCTAssertEqual(ByteRange.answer("bytes=100-", size: 100), .unsatisfiable)
        XCTAssertEqual(ByteRange.answer("bytes=-0", size: 100), .unsatisfiable)
    }

    func testIgnoredForms() {
        // Malformed, other units and several ranges: the whole file (RFC 9110 allows ignoring Range).
        for h in ["bytes=0-1,5-6", "items=0-1", "bytes=a-b", "bytes=9-3", "bytes=", "bytes=-", "bytes=+1-2", "bytes=0x1-2"] {
            XCTAssertEqual(ByteRange.answer(h, size: 100), .whole, h)
        }
    }
}

final class LoginThrottleTests: XCTestCase {
    func testDelaysDoublePerAddressAndClearOnSuccess() {
        let clock = Mutex(1000.0)
        let t = LoginThrottle(now: { clock.withLock { $0 } })
        XCTAssertEqual(t.wait(for: "a"), 0)
        XCTAssertEqual(t.failed("a"), 1)
        XCTAssertEqual(t.wait(for: "a"), 1)
        XCTAssertEqual(t.wait(for: "b"), 0, "another address is not slowed")
        clock.withLock { $0 += 1 }
        XCTAssertEqual(t.failed("a"), 2)
        clock.withLock { $0 += 2 }
        XCTAssertEqual(t.failed("a"), 4)
        for _ in 0..<20 { t.failed("a") }
        XCTAssertEqual(t.wait(for: "a"), LoginThrottle.maxDelaySeconds, "capped")
        t.succeeded("a")
        XCTAssertEqual(t.wait(for: "a"), 0)
    }
}

final class WebSessionsTests: XCTestCase {
    func testCookieSessionsExpireAndEnd() {
        let clock = Mutex(0.0)
        let s = WebSessions(now: { clock.withLock { $0 } })
        let (id, csrf) = s.create()
        XCTAssertEqual(id.count, 43, "32 random bytes, base64url")
        XCTAssertNotEqual(id, csrf)
        XCTAssertEqual(s.session(cookieHeader: "a=1; shutter_session=\(id); b=2")?.session.csrf, csrf)
        XCTAssertNil(s.session(cookieHeader: "shutter_session=\(id.dropLast())x"))
        XCTAssertNil(s.session(cookieHeader: nil))
        clock.withLock { $0 += WebSessions.idleSeconds + 1 }
        XCTAssertNil(s.session(cookieHeader: "shutter_session=\(id)"), "idle too long")
        let (id2, _) = s.create()
        s.end(id2)
        XCTAssertNil(s.session(cookieHeader: "shutter_session=\(id2)"))
    }
}

final class PasswordHashTests: XCTestCase {
    func testArgon2idRoundTrip() throws {
        let hash = try XCTUnwrap(PasswordHash.make("correct horse"))
        XCTAssertTrue(hash.hasPrefix("$argon2id$v=19$m=65536,t=2,p=1$"), hash)
        XCTAssertTrue(PasswordHash.isValid(hash))
        XCTAssertTrue(PasswordHash.verify("correct horse", against: hash))
        XCTAssertFalse(PasswordHash.verify("correct hors", against: hash))
        XCTAssertFalse(PasswordHash.isValid("correct horse"))
        XCTAssertFalse(PasswordHash.isValid("$argon2i$v=19$m=65536,t=2,p=1$c2FsdA$aGFzaA"))
        // The config check accepts exactly this shape (ShutterCore has no crypto).
        let key = ConfigSchema.byPath["web.passwordHash"]!
        XCTAssertNoThrow(try ConfigSchema.check(.string(hash), for: key))
        XCTAssertThrowsError(try ConfigSchema.check(.string("hunter22"), for: key))
    }

    func testWebNumbersNameOnlyDCFFiles() {
        XCTAssertEqual(DCFNumber(webNumber: "1000001"), DCFNumber(directory: 100, file: 1))
        for bad in ["100001", "10000001", "0990001", "1000000", "../1000", "-100001", "1e+0001", "100000a"] {
            XCTAssertNil(DCFNumber(webNumber: Substring(bad)), bad)
        }
        XCTAssertEqual(DCFNumber(directory: 123, file: 45)!.webNumber, 1230045)
    }

    func testListenAddress() {
        XCTAssertEqual(ListenAddress(parsing: "0.0.0.0:8080"), ListenAddress(parsing: "0.0.0.0:8080"))
        XCTAssertEqual(ListenAddress(parsing: "[::]:80")?.host, "::")
        XCTAssertEqual(ListenAddress(parsing: "127.0.0.1:0")?.port, 0)
        for bad in ["8080", "localhost:80", "1.2.3:80", "1.2.3.4:70000", "[::]", "::1:80", "1.2.3.4:", "256.1.1.1:1"] {
            XCTAssertNil(ListenAddress(parsing: bad), bad)
        }
    }
}
