// SPDX-License-Identifier: BSD-2-Clause
import XCTest
@testable import ShutterCore

/// `shutterctl focus X Y`: the point becomes a window an eighth of the
/// picture, centred on it, kept inside the picture, in the frame's coordinates.
final class PointOfInterestTests: XCTestCase {
    private func window(_ x: Double, _ y: Double, _ edit: (inout CameraControls) -> Void = { _ in },
                        rotation: Int = 0, hflip: Bool = false, vflip: Bool = false) throws -> [Double] {
        var c = CameraControls()
        edit(&c)
        return try PointOfInterest(x: x, y: y).window(controls: c, rotation: rotation, hflip: hflip, vflip: vflip)
    }

    func testTheWindowIsCentredOnThePoint() throws {
        XCTAssertEqual(try window(0.5, 0.5), [0.4375, 0.4375, 0.125, 0.125])
        XCTAssertEqual(try window(0.3, 0.8), [0.2375, 0.7375, 0.125, 0.125])
    }

    func testNearAnEdgeItIsMovedInsideNotShrunk() throws {
        XCTAssertEqual(try window(0, 0), [0, 0, 0.125, 0.125])
        XCTAssertEqual(try window(1, 1), [0.875, 0.875, 0.125, 0.125])
        XCTAssertEqual(try window(0.02, 0.97), [0, 0.875, 0.125, 0.125])
        // Every window it makes is one the schema takes for camera.focus.window.
        let key = try XCTUnwrap(ConfigSchema.byPath["camera.focus.window"])
        for x in stride(from: 0.0, through: 1, by: 0.05) {
            for y in [0.0, 0.33, 0.999, 1] {
                let w = try window(x, y, { $0.roi = [0.1, 0.3, 0.7, 0.7]; $0.zoom = 1.7 })
                XCTAssertNoThrow(try ConfigSchema.check(.array(w.map(JSONValue.double)), for: key), "\(x), \(y): \(w)")
            }
        }
    }

    func testThePointIsOnThePictureThroughZoomRoiAndTheMountingTurn() throws {
        // Zoom 2 shows the centre half: the picture's top left is the frame's (0.25, 0.25).
        XCTAssertEqual(try window(0, 0, { $0.zoom = 2 }), [0.25, 0.25, 0.0625, 0.0625])
        XCTAssertEqual(try window(0.5, 0.5, { $0.zoom = 2 }), [0.46875, 0.46875, 0.0625, 0.0625])
        XCTAssertEqual(try window(1, 0, { $0.roi = [0.5, 0.5, 0.5, 0.5] }), [0.9375, 0.5, 0.0625, 0.0625])
        // Turned 180 degrees, the picture's top left is the sensor's bottom right; a mirror flips one axis.
        XCTAssertEqual(try window(0, 0, rotation: 180), [0.875, 0.875, 0.125, 0.125])
        XCTAssertEqual(try window(0, 0, hflip: true), [0.875, 0, 0.125, 0.125])
        XCTAssertEqual(try window(0, 0, vflip: true), [0, 0.875, 0.125, 0.125])
        XCTAssertEqual(try window(0, 0, rotation: 180, hflip: true), [0, 0.875, 0.125, 0.125])
    }

    func testBadPointsAreRefusedNamingWhatIsAllowed() {
        func refusal(_ x: Double?, _ y: Double?) -> String {
            do throws(PointOfInterest.Refusal) {
                _ = try PointOfInterest(x: x, y: y)
                return ""
            } catch {
                return error.message
            }
        }
        func refusal(_ words: [String]) -> String {
            do throws(PointOfInterest.Refusal) {
                _ = try PointOfInterest(words)
                return ""
            } catch {
                return error.message
            }
        }
        let cases: [(String, String)] = [
            (refusal(1.5, 0.5), "X is 1.5"),
            (refusal(0.5, -0.1), "Y is -0.1"),
            (refusal(.nan, 0.5), "X is nan"),
            (refusal(nil, 0.5), "focus needs X and Y"),
            (refusal(["abc", "0.5"]), "X is \"abc\", not a number"),
            (refusal(["0.5"]), "focus needs X and Y"),
            (refusal(["0.5", "0.5", "1"]), "focus needs X and Y"),
        ]
        for (message, start) in cases {
            XCTAssertTrue(message.hasPrefix(start), message)
            XCTAssertTrue(message.contains("each a number from 0 to 1"), message)
        }
        XCTAssertEqual(refusal(["0", "1"]), "", "the edges are allowed")
    }
}
