// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
@testable import ShutterStorage

/// PlainIO.reason, for log lines without Foundation's localizedDescription (issue 31):
/// a file error says the system's reason.
final class ErrorReasonTests: XCTestCase {
    func testErrorReasonNamesTheSystemsReason() {
        XCTAssertThrowsError(try Data([1]).write(to: URL(fileURLWithPath: "/nonexistent-\(getpid())/x.THM"), options: .atomic)) {
            XCTAssertEqual(PlainIO.reason($0), "No such file or directory")
        }
        XCTAssertEqual(PlainIO.reason(PlainIO.Failure(errno: EACCES)), "Permission denied")
        struct Other: Error {}
        XCTAssertEqual(PlainIO.reason(Other()), "Other()")
    }

}
