// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
import ShutterCore
@testable import ShutterService
@testable import ShutterStorage

/// Which photos a time-lapse takes: by number, by the time they were written in the
/// camera's local time (Europe/Berlin, TZ set for the test, across the spring change), in
/// the order of their numbers, clips left out.
final class TimelapseRangeTests: XCTestCase {
    private var savedTZ: String?

    override func setUp() {
        savedTZ = ProcessInfo.processInfo.environment["TZ"]
        setenv("TZ", "Europe/Berlin", 1)
        tzset()
    }

    override func tearDown() {
        if let savedTZ { setenv("TZ", savedTZ, 1) } else { unsetenv("TZ") }
        tzset()
    }

    func item(_ file: Int, _ kind: Storage.MediaKind = .photo, utc: Double, dir: Int = 100) -> MediaItem {
        MediaItem(number: DCFNumber(directory: dir, file: file)!, kind: kind, bytes: 1, modified: utc, hasPoster: false)
    }

    /// 2026-03-29 01:00 UTC: 02:00 CET becomes 03:00 CEST.
    let change: Double = 1_774_746_000

    func testByTimeInLocalTimeAcrossTheSpringChangeAndByNumberAcrossFolders() {
        let items = [
            item(4, utc: change + 1800),        // 03:30 CEST
            item(1, utc: change - 1800),        // 01:30 CET
            item(3, .video, utc: change + 60),  // a clip: never in a film
            item(2, utc: change + 60),          // 03:01 CEST
            item(1, utc: change + 7200, dir: 101),  // 05:00 CEST, after SHTR9999's folder
        ]
        func numbers(_ from: String?, _ to: String?) -> [Int] {
            TimelapseRange(from: from.flatMap(TimelapseBound.init), to: to.flatMap(TimelapseBound.init))
                .photos(items).map(\.number.webNumber)
        }
        XCTAssertEqual(numbers(nil, nil), [1_000_001, 1_000_002, 1_000_004, 1_010_001], "by number, clips out")
        // 03:00 local is 01:00 UTC that night (CEST): 01:30 CET is before it.
        XCTAssertEqual(numbers("2026-03-29T03:00", nil), [1_000_002, 1_000_004, 1_010_001])
        // --to a minute takes in the whole minute.
        XCTAssertEqual(numbers(nil, "2026-03-29T03:01"), [1_000_001, 1_000_002])
        XCTAssertEqual(numbers(nil, "2026-03-29T03:00"), [1_000_001])
        // A date is the whole local day; an offset given is taken as given.
        XCTAssertEqual(numbers("2026-03-29", "2026-03-29"), [1_000_001, 1_000_002, 1_000_004, 1_010_001])
        XCTAssertEqual(numbers("2026-03-30", nil), [])
        XCTAssertEqual(numbers("2026-03-29T01:00Z", "2026-03-29T01:30:00Z"), [1_000_002, 1_000_004])
        // Numbers, both ends in, across folders.
        XCTAssertEqual(numbers("1000002", "1010001"), [1_000_002, 1_000_004, 1_010_001])
        XCTAssertEqual(TimelapseRange(from: TimelapseBound("2026-03-29T03:00"), to: nil).text, "from 2026-03-29T03:00 on")
    }
}
