// SPDX-License-Identifier: BSD-2-Clause
/// `triggers.inputs`: each entry checked and filled in with its defaults (so the decode needs
/// no defaults of its own), and the rules between entries and the other GPIO keys.
extension ConfigSchema {
    static let triggerInputsAllowed = "a list of up to \(maxTriggerInputs) inputs, each {\"name\": NAME, \"line\": LINE, "
        + "\"action\": \"photo\"|\"burst\"|\"clip\", \"activeLow\": true|false, \"bias\": \"pull-up\"|\"pull-down\"|"
        + "\"disabled\"|\"as-is\", \"stabilityMs\": 0...500, \"holdOffSeconds\": 0...3600, \"burstCount\": 2...20, "
        + "\"clipAfterSeconds\": 0...600, \"windows\": \"HH:MM-HH:MM,…\"}; NAME of letters, digits, '-' and '_' "
        + "(1...32), LINE a line name (\"GPIO23\") or offset (23)"

    static let maxTriggerInputs = 16

    static func checkTriggerInputs(_ items: [JSONValue], key: Key) throws(Violation) -> JSONValue {
        guard items.count <= maxTriggerInputs else {
            throw Violation(code: .outOfRange, keyPath: key.path,
                            message: "\"\(key.path)\" has \(items.count) inputs; allowed: \(key.kind.allowed)")
        }
        return .array(try items.enumerated().map { (i, item) throws(Violation) -> JSONValue in
            try checkTriggerInput(item, entry: i + 1, key: key)
        })
    }

    private static func checkTriggerInput(_ item: JSONValue, entry: Int, key: Key) throws(Violation) -> JSONValue {
        var label = "entry \(entry)"
        func bad(_ code: ConfigError.Code, _ what: String) -> Violation {
            Violation(code: code, keyPath: key.path, message: "\"\(key.path)\" \(label) \(what)")
        }
        guard case .object(let fields) = item else {
            throw bad(.wrongType, "is \(item.typeName), not an object; allowed: \(key.kind.allowed)")
        }
        if case .string(let n)? = fields["name"] { label += " (\"\(n)\")" }
        let defaults = ShutterConfig.Triggers.Input(name: "", line: "")
        var out: [String: JSONValue] = [
            "activeLow": .bool(defaults.activeLow), "bias": .string(defaults.bias.rawValue),
            "stabilityMs": .int(defaults.stabilityMs), "holdOffSeconds": .double(defaults.holdOffSeconds),
            "action": .string(defaults.action.rawValue), "burstCount": .int(defaults.burstCount),
            "clipAfterSeconds": .int(defaults.clipAfterSeconds), "windows": .string(defaults.windows),
        ]
        let fieldNames = ShutterConfig.Triggers.Input.fields
        for name in fields.keys.sorted() {
            let v = fields[name]!
            func int(_ range: ClosedRange<Int>) throws(Violation) {
                guard case .int(let n) = v else { throw bad(.wrongType, "has \"\(name)\": \(v.rendered(pretty: false)), not an integer") }
                guard range.contains(n) else {
                    throw bad(.outOfRange, "has \"\(name)\": \(n); allowed: \(range.lowerBound)...\(range.upperBound)")
                }
                out[name] = v
            }
            switch name {
            case "name":
                guard case .string(let s) = v, (1...32).contains(s.count),
                      s.unicodeScalars.allSatisfy(isNameScalar) else {
                    throw bad(.notAllowed, "has \"name\": \(v.rendered(pretty: false)); allowed: letters, digits, '-' and '_', 1...32 of them")
                }
                out[name] = v
            case "line":
                out[name] = try check(v, for: Key(path: "\(key.path) \(label) line", kind: .gpioLine(allowEmpty: false)))
            case "activeLow":
                guard case .bool = v else { throw bad(.wrongType, "has \"activeLow\": \(v.rendered(pretty: false)), not true or false") }
                out[name] = v
            case "bias":
                guard case .string(let s) = v, ShutterConfig.GPIO.Bias(rawValue: s) != nil else {
                    throw bad(.notAllowed, "has \"bias\": \(v.rendered(pretty: false)); allowed: "
                              + ShutterConfig.GPIO.Bias.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))
                }
                out[name] = v
            case "action":
                guard case .string(let s) = v, ShutterConfig.Triggers.Action(rawValue: s) != nil else {
                    throw bad(.notAllowed, "has \"action\": \(v.rendered(pretty: false)); allowed: "
                              + ShutterConfig.Triggers.Action.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))
                }
                out[name] = v
            case "holdOffSeconds":
                guard let d = v.number else { throw bad(.wrongType, "has \"holdOffSeconds\": \(v.rendered(pretty: false)), not a number") }
                guard (0...3600).contains(d) else { throw bad(.outOfRange, "has \"holdOffSeconds\": \(v.rendered(pretty: false)); allowed: 0...3600") }
                out[name] = .double(d)
            case "stabilityMs": try int(0...500)
            case "burstCount": try int(2...20)
            case "clipAfterSeconds": try int(0...600)
            case "windows":
                guard case .string(let s) = v else { throw bad(.wrongType, "has \"windows\": \(v.rendered(pretty: false)), not a string") }
                do throws(IntervalPlan.WindowsError) {
                    out[name] = .string(try IntervalPlan.windows(s).map(\.description).joined(separator: ","))
                } catch {
                    throw bad(.notAllowed, "has \"windows\": \"\(s)\": \(error.message); allowed: \(IntervalPlan.windowsHelp)")
                }
            default:
                throw bad(.unknownKey, "has an unknown field \"\(name)\"" + suggestion(for: name, among: fieldNames,
                                                                                        fallback: fieldNames))
            }
        }
        for needed in ["name", "line"] where out[needed] == nil {
            throw bad(.outOfRange, "has no \"\(needed)\"; allowed: \(key.kind.allowed)")
        }
        return .object(out)
    }

    /// A trigger's name: ASCII letters, digits, '-' and '_'.
    static func isNameScalar(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "-" || c == "_"
    }

    /// A line as a comparable text: "GPIO17" and "17" are the same line on a Pi's header chip.
    static func canonicalLine(_ line: String) -> String {
        if line.hasPrefix("GPIO"), let n = Int(line.dropFirst(4)) { return String(n) }
        return line
    }

    /// Two inputs of one name, or a line that the button, an LED or another input has.
    static func crossCheckTriggers(_ config: ShutterConfig) -> Violation? {
        let path = "triggers.inputs"
        var names: Set<String> = []
        var lines: [String: String] = [:]
        lines[canonicalLine(config.gpio.button)] = "the button (gpio.button)"
        if !config.gpio.statusLed.isEmpty { lines[canonicalLine(config.gpio.statusLed)] = "the status LED (gpio.statusLed)" }
        if !config.gpio.flashLed.isEmpty { lines[canonicalLine(config.gpio.flashLed)] = "the flash LED (gpio.flashLed)" }
        for (i, input) in config.triggers.inputs.enumerated() {
            let label = "\"\(path)\" entry \(i + 1) (\"\(input.name)\")"
            guard names.insert(input.name).inserted else {
                return Violation(code: .notAllowed, keyPath: path,
                                 message: "\(label) has the name of an earlier input; each input needs a name of its own")
            }
            let line = canonicalLine(input.line)
            if let user = lines[line] {
                return Violation(code: .notAllowed, keyPath: path,
                                 message: "\(label) has \"line\": \"\(input.line)\", which \(user) uses already; "
                                    + "a line can be one input or output only")
            }
            lines[line] = "the input \"\(input.name)\""
        }
        return nil
    }
}
