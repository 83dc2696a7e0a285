// SPDX-License-Identifier: BSD-2-Clause
import XCTest
@testable import ShutterCore

/// What `shutterctl timelapse --from/--to` takes: a photo's number, or a time as written.
final class TimelapseBoundTests: XCTestCase {
    func testNumbersAndTimesAsWritten() {
        XCTAssertEqual(TimelapseBound("1000120"), .number(1_000_120))
        XCTAssertEqual(TimelapseBound("2026-12-05"), .time(.init(year: 2026, month: 12, day: 5, span: 86_400)))
        XCTAssertEqual(TimelapseBound("2026-12-05T06:30"),
                       .time(.init(year: 2026, month: 12, day: 5, hour: 6, minute: 30, span: 60)))
        XCTAssertEqual(TimelapseBound("2026-12-05 06:30:15"),
                       .time(.init(year: 2026, month: 12, day: 5, hour: 6, minute: 30, second: 15, span: 1)))
        XCTAssertEqual(TimelapseBound("2026-12-05T06:30Z"),
                       .time(.init(year: 2026, month: 12, day: 5, hour: 6, minute: 30, span: 60, utcOffsetSeconds: 0)))
        XCTAssertEqual(TimelapseBound("2026-12-05T06:30:00-05:30"),
                       .time(.init(year: 2026, month: 12, day: 5, hour: 6, minute: 30, span: 1, utcOffsetSeconds: -19_800)))
    }

    func testWhatIsNeither() {
        for bad in ["", "yesterday", "120", "0990001", "1000000", "2026-13-01", "2026-12-32", "2026-12-05T24:00",
                    "2026-12-05T06", "2026-12-05T06:60", "2026-12-05T06:30+5", "2026-12-05x", "26-12-05", "2026-12-05TZ"] {
            XCTAssertNil(TimelapseBound(bad), bad)
        }
    }
}
