// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
@testable import ShutterCore

/// The buffer memory in `status.camera` and the log: count x bytes per stream, and the total.
final class BufferMemoryReportTests: XCTestCase {
    /// The virtual camera's press-moment configuration: 1920x1080 video and a 4608x2592
    /// still stream, NV12, 4 buffers each (libcamera 0.7.1's kBufferCount).
    private let pair = BufferMemoryReport(streams: [
        .init(role: "video", size: PixelSize(width: 1920, height: 1080), count: 4, bytesPerBuffer: 3_110_400),
        .init(role: "still", size: PixelSize(width: 4608, height: 2592), count: 4, bytesPerBuffer: 17_915_904),
    ])

    func testTotalsAndDescription() {
        XCTAssertEqual(pair.totalBytes, 4 * 3_110_400 + 4 * 17_915_904)
        XCTAssertEqual(pair.description, "video 1920x1080 4 x 3.1 MB + still 4608x2592 4 x 17.9 MB = 84.1 MB")
        XCTAssertEqual(BufferMemoryReport.megabytes(0), "0.0 MB")
        XCTAssertEqual(BufferMemoryReport.megabytes(1_382_400), "1.4 MB")
    }

    func testJSONCarriesTheComputedBytesAndReadsBack() throws {
        let data = try JSONEncoder().encode(pair)
        let tree = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(tree["totalBytes"] as? Int, 84_105_216)
        let streams = try XCTUnwrap(tree["streams"] as? [[String: Any]])
        XCTAssertEqual(streams.map { $0["bytes"] as? Int }, [12_441_600, 71_663_616])
        XCTAssertEqual(try JSONDecoder().decode(BufferMemoryReport.self, from: data), pair)
    }
}
