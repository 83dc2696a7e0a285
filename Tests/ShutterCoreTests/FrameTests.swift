// SPDX-License-Identifier: BSD-2-Clause
import XCTest
@testable import ShutterCore

final class FrameTests: XCTestCase {
    func testI420FrameReleasesItsBufferWhenDropped() {
        final class Flag: @unchecked Sendable { var released = false }
        let flag = Flag()
        do {
            let buf = OwnedFrameBuffer(capacity: Frame.i420ByteCount(width: 4, height: 2))
            let f = Frame.i420(width: 4, height: 2, buffer: buf, timestamp: .milliseconds(1), sequence: 0,
                               onRelease: { flag.released = true })
            XCTAssertEqual(f.planes.map(\.length), [8, 2, 2])
        }
        XCTAssertTrue(flag.released)
    }
}
