// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

extension XCTestCase {
    /// Polls `cond` every 20 ms of real time (the in-process service tests on the
    /// system clock); a failure names `what` once `timeout` passes.
    func waitUntil(_ what: String, timeout: TimeInterval = 20, _ cond: () async -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if await cond() { return }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        XCTFail("timed out waiting for \(what)")
    }
}
