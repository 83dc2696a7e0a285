// SPDX-License-Identifier: BSD-2-Clause
import ShutterControl
import ShutterCore
@testable import ShutterService
import ShutterStorage
import XCTest

/// Requests become typed commands once, where they arrive: every command the protocol
/// names decodes to its case; everything a request can get wrong is refused there, in
/// the words the reply gives, and reaches nothing.
final class ServiceCommandTests: XCTestCase {
    private func decode(_ json: String) -> Result<ServiceCommand, ServiceCommand.Refusal> {
        ControlServer.check(Data(json.utf8))
    }

    private func command(_ json: String, file: StaticString = #filePath, line: UInt = #line) -> ServiceCommand? {
        switch decode(json) {
        case .success(let c): return c
        case .failure(let r):
            XCTFail("\(json) refused: \(r.reply.error ?? "")", file: file, line: line)
            return nil
        }
    }

    private func refusal(_ json: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        switch decode(json) {
        case .success(let c):
            XCTFail("\(json) decoded to \(c), expected a refusal", file: file, line: line)
            return ""
        case .failure(let r): return r.reply.error ?? ""
        }
    }

    func testEveryNamedCommandDecodes() {
        let examples: [String: String] = [
            "hold": #"{"cmd":"hold","seconds":2}"#, "record": #"{"cmd":"record","action":"start"}"#,
            "set": #"{"cmd":"set","key":"flash.mode","value":"on"}"#, "focus": #"{"cmd":"focus","x":0.5,"y":0.5}"#,
            "delete": #"{"cmd":"delete","file":"last"}"#, "web-token": #"{"cmd":"web-token","action":"list"}"#,
            "mqtt": #"{"cmd":"mqtt","action":"forget"}"#,
            "trouble": #"{"cmd":"trouble","name":"MQTT","value":"no connection to mqtt://nas:1883"}"#,
            "upload": #"{"cmd":"upload","action":"status"}"#,
            "interval": #"{"cmd":"interval","action":"pause"}"#,
            "upload-report": #"{"cmd":"upload-report","value":{"remote":"nas:camera","events":[{"event":"uploaded","file":"x"}]}}"#,
        ]
        for name in ControlRequest.commands {
            let json = examples[name] ?? "{\"cmd\":\"\(name)\"}"
            let c = command(json)
            XCTAssertEqual(c?.name, name == "tap" ? "photo" : name, json)
        }
    }

    func testFieldsBecomeTypedValues() {
        XCTAssertEqual(command(#"{"cmd":"tap"}"#), .photo)
        XCTAssertEqual(command(#"{"cmd":"hold","seconds":2.5}"#), .hold(seconds: 2.5))
        XCTAssertEqual(command(#"{"cmd":"record","action":"stop"}"#), .recordStop)
        XCTAssertEqual(command(#"{"cmd":"set","key":"camera.roi","value":null}"#), .set(key: "camera.roi", value: .null))
        XCTAssertEqual(command(#"{"cmd":"get"}"#), .get(key: nil))
        XCTAssertEqual(command(#"{"cmd":"reset","key":"flash.mode"}"#), .reset(key: "flash.mode"))
        XCTAssertEqual(command(#"{"cmd":"focus","action":"reset"}"#), .focus(.reset))
        XCTAssertEqual(command(#"{"cmd":"camera","camera":"next"}"#), .camera("next"))
        XCTAssertEqual(command(#"{"cmd":"camera"}"#), .camera(nil))
        XCTAssertEqual(command(#"{"cmd":"delete","file":1000007}"#),
                       .delete(.number(DCFNumber(webNumber: "1000007")!)))
        XCTAssertEqual(command(#"{"cmd":"sim","fault":"stall","lux":3}"#),
                       .sim(.init(fault: .stall, lux: 3, ledFailing: nil)))
        XCTAssertEqual(command(#"{"cmd":"web-token","action":"add","name":"ha","scope":"view"}"#),
                       .webToken(.add(name: "ha", scope: "view")))
        guard case .focus(.point(let p))? = command(#"{"cmd":"focus","x":0.25,"y":0.75}"#) else {
            return XCTFail("focus x y is a point")
        }
        XCTAssertEqual(p.x, 0.25)
        XCTAssertEqual(p.y, 0.75)
    }

    func testWhatIsMissingOrWrongIsRefusedWhereItArrives() {
        XCTAssertTrue(refusal(#"{"cmd":"hold"}"#).hasPrefix("hold needs \"seconds\""))
        XCTAssertEqual(refusal(#"{"cmd":"record"}"#), "record needs \"action\": \"start\" or \"stop\"")
        XCTAssertTrue(refusal(#"{"cmd":"set","key":"flash.mode"}"#).hasPrefix("set needs \"key\" and \"value\""))
        XCTAssertTrue(refusal(#"{"cmd":"focus","action":"spin"}"#).contains("(not \"spin\")"))
        XCTAssertTrue(refusal(#"{"cmd":"focus","x":0.5}"#).hasPrefix("focus needs X and Y"))
        XCTAssertEqual(refusal(#"{"cmd":"delete","file":"SHTR"}"#), CardFiles.usage)
        XCTAssertEqual(refusal(#"{"cmd":"delete"}"#), CardFiles.usage)
        XCTAssertTrue(refusal(#"{"cmd":"sim","fault":"melt"}"#).hasPrefix("unknown fault \"melt\""))
        XCTAssertTrue(refusal(#"{"cmd":"web-token","action":"add","name":"ha"}"#).hasPrefix("web-token add needs"))
        XCTAssertEqual(refusal(#"{"cmd":"web-token","action":"revoke"}"#), "web-token revoke needs \"name\"")
        XCTAssertEqual(refusal(#"{"cmd":"mqtt"}"#), "mqtt needs \"action\": \"forget\"")
        XCTAssertTrue(refusal(#"{"cmd":"dance"}"#).hasPrefix("unknown command \"dance\""))
        XCTAssertTrue(refusal(#"{"cmd":"hold","seconds":-1}"#).contains("seconds"))
        XCTAssertTrue(refusal("not json").hasPrefix("malformed request"))
    }

    func testATimelapseRequestAndItsRefusals() {
        XCTAssertEqual(command(#"{"cmd":"timelapse"}"#), .timelapse(.make(.init(range: TimelapseRange(), fps: 25))))
        XCTAssertEqual(command(#"{"cmd":"timelapse","from":1000120,"to":"2026-12-05","fps":30,"size":"1280x720","output":"a.mp4"}"#),
                       .timelapse(.make(.init(range: TimelapseRange(from: .number(1_000_120), to: TimelapseBound("2026-12-05")),
                                              fps: 30, size: PixelSize(width: 1280, height: 720), output: "a.mp4"))))
        XCTAssertEqual(command(#"{"cmd":"timelapse","action":"cancel"}"#), .timelapse(.cancel))
        XCTAssertEqual(command(#"{"cmd":"timelapse","action":"status"}"#), .timelapse(.status))
        XCTAssertTrue(refusal(#"{"cmd":"timelapse","action":"later"}"#).contains("make (the default), status or cancel"))
        XCTAssertTrue(refusal(#"{"cmd":"timelapse","fps":0}"#).contains("fps 0 is outside 1...120"))
        XCTAssertTrue(refusal(#"{"cmd":"timelapse","size":"1281x720"}"#).contains("even numbers"))
        XCTAssertTrue(refusal(#"{"cmd":"timelapse","size":"big"}"#).contains("WIDTHxHEIGHT"))
        for name in ["x.mov", ".x.MP4", "a/b.MP4", ""] {
            XCTAssertTrue(refusal(#"{"cmd":"timelapse","output":"\#(name)"}"#).contains("file name ending in .MP4"), name)
        }
        XCTAssertTrue(refusal(#"{"cmd":"timelapse","from":"monday"}"#).contains("is neither"))
    }

    /// MQTT takes the captures and settings, in JSON or in words, and nothing else.
    func testMQTTTakesItsCommandsTyped() {
        func mqtt(_ text: String) -> Result<ServiceCommand, ServiceCommand.Refusal> { MQTTCommands.request(Data(text.utf8)).map(\.0) }
        // The line it was decoded from, for the connector to send to shutterd as it is.
        XCTAssertEqual(try? MQTTCommands.request(Data("hold 3".utf8)).get().1, Array(#"{"cmd":"hold","seconds":3.0}"#.utf8))
        XCTAssertEqual(try? mqtt("record start").get(), .recordStart)
        XCTAssertEqual(try? mqtt("PRESS").get(), .photo)
        XCTAssertEqual(try? mqtt("set camera.exposure.ev 1").get(), .set(key: "camera.exposure.ev", value: .int(1)))
        guard case .failure(let r) = mqtt(#"{"cmd":"delete","file":"last"}"#) else { return XCTFail("delete over MQTT") }
        XCTAssertTrue(r.reply.error?.hasPrefix("command \"delete\" is not taken over MQTT") ?? false)
    }
}
