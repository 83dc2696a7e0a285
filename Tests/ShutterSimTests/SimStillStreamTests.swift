// SPDX-License-Identifier: BSD-2-Clause
import XCTest
@testable import ShutterSim
@testable import ShutterCore

/// The simulated pipeline's second stream and its SensorTimestamp convention.
final class SimStillStreamTests: XCTestCase {
    private func luma(_ f: Frame) -> [UInt8] { Array(UnsafeRawBufferPointer(start: f.planes[0].base, count: f.planes[0].length)) }

    func testEachVideoFrameCarriesTheStillStreamFrameOfTheSameSensorFrame() async throws {
        var s = SimCamera.Settings()
        s.width = 160
        s.height = 120
        s.stillStream = PixelSize(width: 640, height: 360)
        let clock = ManualClock(start: .milliseconds(10_000))
        let board = SimBoard(camera: s, clock: clock)
        let cam = board.camera
        XCTAssertNil(cam.stillStreamSize, "granted at the start")
        var it = try await cam.start().makeAsyncIterator()
        XCTAssertEqual(cam.stillStreamSize, PixelSize(width: 640, height: 360))
        await board.advance(by: .milliseconds(100))
        let next = await it.next()
        let f = try XCTUnwrap(next)
        let still = try XCTUnwrap(f.companion)
        XCTAssertEqual([still.width, still.height], [640, 360])
        XCTAssertEqual(still.sequence, f.sequence)
        XCTAssertEqual(still.timestamp, f.timestamp)
        let exposure = try XCTUnwrap(f.metadata.exposureTimeMicroseconds)
        XCTAssertEqual(f.exposureStart, f.timestamp - .microseconds(exposure), "stamped at the exposure's end")
        // Both carry the label: the frame number and the exposure start.
        for frame in [f, still] {
            let label = try XCTUnwrap(BurnedInLabel.read(luma: luma(frame), width: frame.width, height: frame.height))
            XCTAssertEqual(label.frame, f.sequence)
            XCTAssertEqual(label.millis, f.exposureStart.milliseconds)
        }
        await cam.stop()
    }

    func testOneStreamByDefault() async throws {
        let board = SimBoard(camera: { var s = SimCamera.Settings(); s.width = 160; s.height = 120; return s }(),
                             clock: ManualClock(start: .milliseconds(10_000)))
        var it = try await board.camera.start().makeAsyncIterator()
        await board.advance(by: .milliseconds(40))
        let next = await it.next()
        let f = try XCTUnwrap(next)
        XCTAssertNil(f.companion)
        XCTAssertNil(board.camera.stillStreamSize)
        await board.camera.stop()
    }
}
