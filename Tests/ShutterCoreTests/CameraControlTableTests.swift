// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
@testable import ShutterCore

/// `CameraControls.table` is the one declaration of each sensor control: every
/// entry, key by key, round-trips through the configuration's JSON, the
/// report (`requestedControls`, what is lacking) and the libcamera plan, and
/// the table covers every value of `CameraControls`.
final class CameraControlTableTests: XCTestCase {
    /// A camera with every control the mapping knows, a crop area, automatic
    /// flicker detection and the sensor's HDR on: nothing asked is lacking there.
    static let full = LibcameraControlSupport(
        names: Set(LibcameraControlSupport.knownNames), cropMaximum: PixelRect(x: 0, y: 0, width: 4608, height: 2592),
        flickerModeMaximum: 2, defaultLensPosition: 1, sensorHDR: .on(node: "/dev/v4l-subdev2"))
    /// A camera with no control at all: whatever is asked is lacking there.
    static let bare = LibcameraControlSupport(names: [])

    func testTheTableCoversEveryValueOfCameraControlsByItsName() {
        func leaves(_ value: Any, _ prefix: String) -> [String] {
            Mirror(reflecting: value).children.flatMap { child -> [String] in
                let path = prefix + child.label!
                return Mirror(reflecting: child.value).displayStyle == .struct ? leaves(child.value, path + ".") : [path]
            }
        }
        let values = leaves(CameraControls(), "camera.")
        let keys = CameraControls.configKeys.map(\.path)
        XCTAssertEqual(Set(values), Set(keys), "a key per value, named as the value (camera.focus.window is focus.window)")
        XCTAssertEqual(keys.count, Set(keys).count, "each key once")
        XCTAssertEqual(CameraControlID.allCases.count, Set(CameraControlID.allCases).count, "each control once")
        XCTAssertGreaterThanOrEqual(keys.count, 22)
    }

    func testTheSchemaTakesTheTablesKeysInPlaceAndEachCanBeSetAtRuntime() throws {
        let schema = ConfigSchema.keys.map(\.path)
        let keys = CameraControls.configKeys.map(\.path)
        let first = try XCTUnwrap(schema.firstIndex(of: keys[0]))
        XCTAssertEqual(Array(schema[first..<first + keys.count]), keys, "together, in the table's order")
        XCTAssertEqual(schema[first - 1], "camera.stillTimeoutMs")
        for key in CameraControls.configKeys {
            XCTAssertEqual(ConfigSchema.byPath[key.path]?.kind.allowed, key.kind.allowed, key.path)
            XCTAssertTrue(RuntimeSettings.isSettable(key.path), key.path)
        }
    }

    /// Each key off its default, through the configuration: read back the
    /// same, the same JSON from PlainJSON and JSONEncoder, only its control
    /// asked for, lacking (with its keys) on a camera without controls, and
    /// on one with them set in libcamera under a name its entry declares.
    func testEveryKeyRoundTripsThroughConfigJSONTheReportAndTheLibcameraPlan() throws {
        let defaults = ShutterConfig().tree()
        let neutralPlan = CameraControls().libcameraPlan(for: Self.full, role: .video)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        XCTAssertEqual(neutralPlan.lacking, [], "defaults ask nothing")
        XCTAssertEqual(CameraControls().requestedControls, [])
        var checked = 0
        for control in CameraControls.table {
            XCTAssertEqual(control.id.control?.id, control.id)
            var reachesLibcamera = false
            for key in control.keys {
                let values = try Self.otherValues(for: key, default: try XCTUnwrap(defaults.value(at: key.path)))
                XCTAssertFalse(values.isEmpty, "\(key.path): no value off its default to try")
                for value in values {
                    let what = "\(key.path) = \(value.rendered(pretty: false))"
                    var tree = defaults
                    tree.setValue(value, at: key.path)
                    let config = try PlainJSON.decode(ShutterConfig.self, from: tree)
                    let controls = config.camera.controls
                    // The configuration's JSON: this key has the value, every other key its default.
                    XCTAssertEqual(config.tree(), tree, what)
                    let json = try PlainJSON.encode(controls)
                    XCTAssertEqual(json, Array(try encoder.encode(controls)), what)
                    XCTAssertEqual(try JSONDecoder().decode(CameraControls.self, from: Data(json)), controls, what)
                    XCTAssertEqual(try PlainJSON.decode(CameraControls.self, from: json), controls, what)
                    let shown = try XCTUnwrap(try JSONParser.parse(String(decoding: json, as: UTF8.self)).value
                        .value(at: String(key.path.dropFirst("camera.".count))), what)
                    XCTAssertEqual(try ConfigSchema.check(shown, for: ConfigSchema.Key(path: key.path, kind: key.kind)),
                                   value, what)

                    // The report: this control asked for, and only it.
                    XCTAssertEqual(controls.requestedControls, [control.id], what)
                    XCTAssertTrue(LackingControl(control.id).keys.contains(key.path), what)
                    XCTAssertEqual(LackingControl(control.id).reason, control.lackingReason, what)

                    // libcamera: lacking where the camera has nothing, with its keys.
                    for role in [CameraStreamRole.video, .still] {
                        let bare = controls.libcameraPlan(for: Self.bare, role: role)
                        XCTAssertEqual(bare.lacking.map(\.control), [control.id.rawValue], "\(what), \(role)")
                        XCTAssertEqual(bare.lacking.first?.keys, control.keys.map(\.path), "\(what), \(role)")
                        XCTAssertEqual(bare.settings, [], "\(what), \(role): nothing set on a camera without controls")
                    }
                    let plan = controls.libcameraPlan(for: Self.full, role: .video)
                    let names = Set(plan.settings.map(\.name))
                    XCTAssertTrue(names.isSubset(of: LibcameraControlSupport.knownNames), "\(what): \(names)")
                    if case .noControl = control.libcamera {
                        XCTAssertEqual(plan.lacking.map(\.control), [control.id.rawValue], what)
                        XCTAssertEqual(plan.settings, neutralPlan.settings, "\(what): nothing invented for libcamera")
                    } else {
                        XCTAssertEqual(plan.lacking, [], what)
                        let changed = plan.settings.filter { !neutralPlan.settings.contains($0) }.map(\.name)
                        if changed.contains(where: control.libcameraNames.contains) { reachesLibcamera = true }
                    }
                    checked += 1
                }
            }
            if case .noControl = control.libcamera { continue }
            XCTAssertTrue(reachesLibcamera, "\(control.id): no value of its keys changes \(control.libcameraNames)")
        }
        XCTAssertGreaterThan(checked, 40)
    }

    /// As the synthesized decoding was: a nullable key left out reads as null; any other is needed.
    func testANullableKeyMayBeLeftOutOfTheJSONAndNoOtherMay() throws {
        var tree = try JSONParser.parse(String(decoding: try PlainJSON.encode(CameraControls()), as: UTF8.self)).value
        guard case .object(var top) = tree, case .object(var focus)? = top["focus"] else { return XCTFail("\(tree)") }
        focus["window"] = nil
        focus["lensPosition"] = nil
        top["focus"] = .object(focus)
        top["roi"] = nil
        tree = .object(top)
        XCTAssertEqual(try PlainJSON.decode(CameraControls.self, from: tree), CameraControls())
        top["zoom"] = nil
        XCTAssertThrowsError(try PlainJSON.decode(CameraControls.self, from: JSONValue.object(top)))
    }

    func testALibcameraControlIsTracedBackToItsEntry() {
        for control in CameraControls.table {
            for name in control.libcameraNames {
                XCTAssertEqual(CameraControls.control(forLibcameraName: name)?.id, control.id, name)
            }
        }
        XCTAssertEqual(CameraControls.control(forLibcameraName: "AeEnable")?.id, "ExposureTime")
        XCTAssertEqual(CameraControls.control(forLibcameraName: "AfMetering")?.id, "AfWindows")
        XCTAssertNil(CameraControls.control(forLibcameraName: "FrameDurationLimits"))
        XCTAssertNil(CameraControlID(rawValue: "NoSuchControl").control)
        XCTAssertEqual(LackingControl("NoSuchControl").keys, [])
    }

    /// Values of `key` other than its default that the schema accepts, normalized.
    static func otherValues(for key: CameraControl.Key, default: JSONValue) throws -> [JSONValue] {
        let candidates: [JSONValue]
        switch key.kind {
        case .int(let r, _):
            candidates = [r.upperBound, r.lowerBound, (r.lowerBound + r.upperBound) / 2].map(JSONValue.int)
        case .double(let r, _), .autoOrDouble(let r):
            candidates = [r.upperBound, r.lowerBound, (r.lowerBound + r.upperBound) / 2].map(JSONValue.double)
        case .choice(let choices):
            candidates = choices.map(JSONValue.string)
        case .normalisedRect:
            candidates = [.array([0.25, 0.25, 0.5, 0.5].map(JSONValue.double))]
        case .numbers(let names, let r, _):
            candidates = [.array(names.map { _ in .double((r.lowerBound + r.upperBound) / 2) })]
        default:
            XCTFail("\(key.path): a control key of a kind this test has no values for; add some")
            return []
        }
        let schema = ConfigSchema.Key(path: key.path, kind: key.kind)
        return try candidates.compactMap { v in
            let normalized = try ConfigSchema.check(v, for: schema)
            return normalized == `default` ? nil : normalized
        }
    }
}
