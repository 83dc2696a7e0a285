// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterControl
import ShutterCore

/// A command received on `<topic>/command`, as the control socket's request: either the
/// socket's own JSON line (`{"cmd":"photo"}`), checked by the socket's own check, or the
/// same in words ("photo", "record start", "hold 3", "set camera.exposure.ev 1",
/// "reset", "camera next", "focus 0.5 0.5"). What is refused here gets the socket's
/// kind of error reply; nothing refused here reaches the camera.
enum MQTTCommands {
    /// What MQTT may ask: the captures and the camera's settings, not the card's files,
    /// the simulated board's faults, the web tokens or a client's own button.
    static let allowed: Set<String> = ["status", "photo", "tap", "record", "hold", "set", "get", "reset", "camera", "focus"]
    /// As the control socket's line (ControlServer.maxRequestBytes).
    static let maxBytes = 64 * 1024

    /// The command and the control socket's line it was decoded from.
    static func request(_ payload: Data) -> Result<(ServiceCommand, [UInt8]), ServiceCommand.Refusal> {
        guard payload.count <= maxBytes else {
            return .failure(refused("command too long (\(payload.count) bytes; at most 64 KiB)"))
        }
        guard let text = String(validating: payload, as: UTF8.self) else {
            return .failure(refused("command is not UTF-8 text"))
        }
        let trimmed = text.trimmedWhitespace
        let line: Data
        if trimmed.hasPrefix("{") {
            line = Data(trimmed.utf8)
        } else {
            switch words(trimmed) {
            case .success(let o): line = Data(JSONValue.object(o).rendered(pretty: false).utf8)
            case .failure(let r): return .failure(r)
            }
        }
        switch ControlServer.check(line) {
        case .failure(let refusal):
            return .failure(refusal)
        case .success(let command):
            guard allowed.contains(command.name) else {
                return .failure(refused("command \"\(command.name)\" is not taken over MQTT (known: \(allowed.sorted().joined(separator: ", ")))"))
            }
            return .success((command, Array(line)))
        }
    }

    /// "record start" → {"cmd":"record","action":"start"}; Home Assistant's button's
    /// default payload "PRESS" is a photo.
    private static func refused(_ message: String) -> ServiceCommand.Refusal { .init(message) }

    static func words(_ text: String) -> Result<JSONObject, ServiceCommand.Refusal> {
        let w = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let first = w.first else { return .failure(refused("empty command")) }
        func number(_ s: String) -> JSONValue? { Double(s).flatMap { $0.isFinite ? JSONValue.double($0) : nil } }
        switch (first.lowercased(), w.count) {
        case ("press", 1), ("photo", 1), ("tap", 1), ("status", 1):
            return .success(["cmd": .string(first.lowercased() == "press" ? "photo" : first.lowercased())])
        case ("record", 2):
            return .success(["cmd": .string("record"), "action": .string(w[1].lowercased())])
        case ("hold", 2):
            guard let s = number(w[1]) else { break }
            return .success(["cmd": .string("hold"), "seconds": s])
        case ("camera", 2):
            return .success(["cmd": .string("camera"), "camera": .string(w[1])])
        case ("focus", 2) where w[1].lowercased() == "reset":
            return .success(["cmd": .string("focus"), "action": .string("reset")])
        case ("focus", 3):
            guard let x = number(w[1]), let y = number(w[2]) else { break }
            return .success(["cmd": .string("focus"), "x": x, "y": y])
        case ("reset", 1), ("get", 1):
            return .success(["cmd": .string(first.lowercased())])
        case ("reset", 2), ("get", 2):
            return .success(["cmd": .string(first.lowercased()), "key": .string(w[1])])
        case ("set", 3...):
            // The value as JSON (2, "daylight", [1.5,2], null), else as a string.
            let text = w[2...].joined(separator: " ")
            let value = (try? JSONParser.parse(text).value) ?? .string(text)
            return .success(["cmd": .string("set"), "key": .string(w[1]), "value": value])
        default:
            break
        }
        return .failure(refused("unknown command \"\(String(text.prefix(80)))\" (photo, record start|stop, hold SECONDS, "
                                 + "set KEY VALUE, reset [KEY], camera next, focus X Y, status, or the control socket's JSON)"))
    }
}
