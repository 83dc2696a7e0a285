// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
@testable import ShutterCore

/// `shutterctl camera NEXT|INDEX|MODEL`, the remembered choice, and size
/// preference lists: the pure parts (issue 11).
final class CameraChoiceTests: XCTestCase {
    private let cameras = [
        CameraListing(index: 0, model: "imx708", id: "a"),
        CameraListing(index: 1, model: "imx219", id: "b"),
        CameraListing(index: 2, model: "imx708_wide", id: "c"),
    ]

    private func pick(_ text: String, inUse: Int? = 0) -> Int? {
        guard let c = CameraChoice(parsing: text) else { return nil }
        return try? c.pick(from: cameras, inUse: inUse).get()
    }

    func testNextCyclesIndexAndModelPick() {
        XCTAssertEqual(pick("next", inUse: 0), 1)
        XCTAssertEqual(pick("NEXT", inUse: 1), 2)
        XCTAssertEqual(pick("next", inUse: 2), 0, "wraps round")
        XCTAssertEqual(pick("next", inUse: nil), 0, "none in use: the first")
        XCTAssertEqual(pick("2"), 2)
        XCTAssertEqual(pick("imx219"), 1)
        XCTAssertEqual(pick("IMX708"), 0, "exact model first, case-insensitive")
        XCTAssertEqual(pick("imx708_w"), 2, "else a model starting with it")
    }

    func testBadArgumentsAreRefusedNamingTheCameras() {
        XCTAssertNil(CameraChoice(parsing: ""))
        XCTAssertNil(CameraChoice(parsing: "-1"))
        for text in ["3", "ov5647"] {
            let result = CameraChoice(parsing: text)!.pick(from: cameras, inUse: 0)
            guard case .failure(let e) = result else { return XCTFail("\(text) picked \(result)") }
            XCTAssertTrue(e.message.contains("0 (imx708), 1 (imx219), 2 (imx708_wide)"), e.message)
        }
        guard case .failure(let none) = CameraChoice.next.pick(from: [], inUse: nil) else { return XCTFail() }
        XCTAssertEqual(none.message, "no camera is connected")
    }

    func testARememberedCameraIsFoundByIndexThenByModelElseGone() {
        XCTAssertEqual(CameraPick(index: 1, model: "imx219").find(in: cameras), 1)
        let reordered = [cameras[1], cameras[0]]
        XCTAssertEqual(CameraPick(index: 1, model: "imx219").find(in: reordered), 0, "the list's order changed")
        XCTAssertNil(CameraPick(index: 1, model: "ov5647").find(in: cameras))
        // Two cameras of one model: the index tells them apart.
        let twins = [CameraListing(index: 0, model: "imx708", id: "a"), CameraListing(index: 1, model: "imx708", id: "b")]
        XCTAssertEqual(CameraPick(index: 1, model: "imx708").find(in: twins), 1)
    }

    func testTheStateFileKeepsTheCameraApartFromTheSettings() throws {
        var s = RuntimeSettings(base: ShutterConfig())
        try s.set("camera.exposure.ev", to: .int(1))
        s.camera = CameraPick(index: 1, model: "imx219")
        let parsed = try RuntimeSettings.parseState(s.stateDocument)
        XCTAssertEqual(parsed.camera, CameraPick(index: 1, model: "imx219"))
        XCTAssertEqual(parsed.changes, ["camera.exposure.ev": .double(1)])
        XCTAssertEqual(parsed.dropped, [])
        s.resetAll()
        XCTAssertEqual(s.camera, CameraPick(index: 1, model: "imx219"), "reset is for the settings, not the camera")
        let bad = try RuntimeSettings.parseState(#"{"cameraInUse": {"index": "one"}}"#)
        XCTAssertNil(bad.camera)
        XCTAssertEqual(bad.dropped.count, 1)
        XCTAssertTrue(bad.dropped[0].hasPrefix("cameraInUse: "), bad.dropped[0])
    }

    func testASizeListFallsThroughToTheFirstSizeTheCameraGrants() {
        let asked = [PixelSize(width: 1920, height: 1080), PixelSize(width: 1280, height: 720),
                     PixelSize(width: 640, height: 480)]
        XCTAssertEqual(SizePreference.grant(asked, largest: nil), asked[0])
        XCTAssertEqual(SizePreference.grant(asked, largest: PixelSize(width: 1640, height: 1232)), asked[1])
        XCTAssertEqual(SizePreference.grant(asked, largest: PixelSize(width: 640, height: 480)), asked[2])
        let adjusted = SizePreference.grant(asked, largest: PixelSize(width: 321, height: 241))
        XCTAssertEqual(adjusted, PixelSize(width: 320, height: 240), "none fits: the last, shrunk (even sides)")
        XCTAssertEqual(SizePreference.entry(of: asked[1], in: asked), 1)
        XCTAssertNil(SizePreference.entry(of: adjusted, in: asked))
    }
}

/// `video.sizes`, `still.sizes` and `sim.cameras` in the config file.
final class SizeListAndSimCamerasConfigTests: ConfigTestCase {
    func testSizeListsReadAsListsOrOneStringAndDefaultToWidthAndHeight() throws {
        let plain = try load()
        XCTAssertEqual(plain.videoSizes, [PixelSize(width: 1920, height: 1080)])
        XCTAssertEqual(plain.stillSizes, [PixelSize(width: 4608, height: 2592)])
        let path = try write("shutter.json", """
        {"video": {"sizes": ["1920x1080", "1280X720"]}, "still": {"sizes": "2304x1296"},
         "sim": {"cameras": ["imx708", {"model": "imx219", "broken": true, "maxSize": "1280x720"}]}}
        """)
        let c = try load(file: path)
        XCTAssertEqual(c.video.sizes, ["1920x1080", "1280x720"])
        XCTAssertEqual(c.videoSizes, [PixelSize(width: 1920, height: 1080), PixelSize(width: 1280, height: 720)])
        XCTAssertEqual(c.stillSizes, [PixelSize(width: 2304, height: 1296)], "one string is a list of one")
        XCTAssertEqual(c.sim.cameras, [.init(model: "imx708"), .init(model: "imx219", broken: true, maxSize: "1280x720")])
        let cli = try load(overrides: ["video.sizes": "1280x720,640x480", "sim.cameras": "a,b"])
        XCTAssertEqual(cli.videoSizes, [PixelSize(width: 1280, height: 720), PixelSize(width: 640, height: 480)])
        XCTAssertEqual(cli.sim.cameras?.map(\.model), ["a", "b"])
        XCTAssertEqual(try load(file: try write("p.json", c.printable())), c, "--print-config reads back")
    }

    func testBadSizeListsAndSimCamerasAreRefusedWithKeyLineAndWhatIsAllowed() throws {
        let cases: [(json: String, key: String, code: ConfigError.Code, says: String)] = [
            (#""video": {"sizes": ["1920x1080", "big"]}"#, "video.sizes", .wrongType, "entry 2"),
            (#""video": {"sizes": ["1921x1080"]}"#, "video.sizes", .outOfRange, "both even"),
            (#""video": {"sizes": []}"#, "video.sizes", .outOfRange, "WIDTHxHEIGHT"),
            (#""still": {"sizes": ["99999x10"]}"#, "still.sizes", .outOfRange, "width 64...16384"),
            (#""sim": {"cameras": []}"#, "sim.cameras", .outOfRange, "1...8 cameras"),
            (#""sim": {"cameras": [{"model": "x", "brokn": true}]}"#, "sim.cameras", .unknownKey, "did you mean \"broken\""),
            (#""sim": {"cameras": [{"broken": true}]}"#, "sim.cameras", .outOfRange, "has no \"model\""),
            (#""sim": {"cameras": [{"model": "x", "maxSize": "huge"}]}"#, "sim.cameras", .outOfRange, "maxSize \"huge\""),
            (#""sim": {"cameras": [3]}"#, "sim.cameras", .wrongType, "entry 1 is an integer"),
        ]
        for c in cases {
            let e = try error(file: "{\n\(c.json)\n}")
            XCTAssertEqual(e.keyPath, c.key, c.json)
            XCTAssertEqual(e.code, c.code, "\(c.json): \(e)")
            XCTAssertTrue(e.source.hasSuffix("shutter.json line 2"), "\(c.json): \(e.source)")
            XCTAssertTrue(e.message.contains(c.says), "\(c.json): \(e.message)")
        }
    }
}
