// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// The camera settings and tap-to-focus routes: `get`, `set`, `reset` and `focus`
/// on the control socket's request path, so a value is checked, refused and
/// worded exactly as `shutterctl set` is (docs/configuration.md "Changing them while the service runs").
extension WebApp {
    /// `GET /api/settings`: the `get` reply's settings, each with the page's
    /// `input` (what control edits it) and `allowed` (in words) from the schema.
    func settings() -> WebResponse {
        guard var reply = ask(["cmd": .string("get")]) else { return Self.noAnswer(askDeadline) }
        if case .array(let list)? = reply["settings"] {
            reply["settings"] = .array(list.map { item in
                guard case .object(var o) = item, case .string(let key)? = o["key"],
                      let schema = ConfigSchema.byPath[key] else { return item }
                o["input"] = .object(Self.input(for: schema.kind))
                o["allowed"] = .string(schema.kind.allowed)
                return .object(o)
            })
        }
        return .json(Self.status(of: reply, refused: 500), reply)
    }

    /// `POST /api/settings` `{"key":…,"value":…}`: `set`. A refusal is the client's (400).
    func setSetting(_ r: WebRequest) -> WebResponse {
        guard let o = Self.bodyObject(r), case .string(let key)? = o["key"], let value = o["value"] else {
            return .error(400, "expected {\"key\":\"camera.exposure.ev\",\"value\":1} (value: JSON, null allowed)")
        }
        return service(["cmd": .string("set"), "key": .string(key), "value": value], refused: 400)
    }

    /// `POST /api/settings/reset` `{"key":…}`, or no key (an empty body): every runtime change.
    func resetSetting(_ r: WebRequest) -> WebResponse {
        var request: JSONObject = ["cmd": .string("reset")]
        if !r.body.isEmpty {
            guard let o = Self.bodyObject(r) else { return .error(400, "expected {\"key\":\"camera.exposure.ev\"} or {} (every setting)") }
            switch o["key"] {
            case .string(let key)?: request["key"] = .string(key)
            case nil, .null?: break
            default: return .error(400, "\"key\" must be a setting's name, e.g. \"camera.exposure.ev\"")
            }
        }
        return service(request, refused: 400)
    }

    /// `POST /api/focus` `{"x":…,"y":…}` (0...1 across and down the picture) or
    /// `{"action":"reset"}`. `x` and `y` are passed on as they came: the control
    /// request reads them through their bounds (RequestNumber.focusX/Y) and its
    /// refusal says what is allowed.
    func focus(_ r: WebRequest) -> WebResponse {
        guard let o = Self.bodyObject(r) else {
            return .error(400, "expected {\"x\":0.5,\"y\":0.5} (0...1 across and down the picture) or {\"action\":\"reset\"}")
        }
        var request: JSONObject = ["cmd": .string("focus")]
        if o["action"] == .string("reset") {
            request["action"] = .string("reset")
        } else {
            for name in ["x", "y"] { request[name] = o[name] }
        }
        return service(request, refused: 400)
    }

    static func bodyObject(_ r: WebRequest) -> JSONObject? {
        guard case .object(let o)? = try? JSONParser.parse(String(decoding: r.body, as: UTF8.self)).value else { return nil }
        return o
    }

    /// The control that edits a key: a choice, a number (with its range), a
    /// checkbox, or JSON text for lists, rectangles and values that may be null.
    static func input(for kind: ConfigSchema.Kind) -> JSONObject {
        switch kind {
        case .choice(let choices): return ["type": .string("choice"), "choices": .array(choices.map { .string($0) })]
        case .intChoice(let choices): return ["type": .string("choice"), "choices": .array(choices.map { .int($0) })]
        case .bool: return ["type": .string("bool")]
        case .int(let r, _):
            return ["type": .string("number"), "min": .int(r.lowerBound), "max": .int(r.upperBound), "step": .int(1)]
        case .double(let r, nullable: false):
            return ["type": .string("number"), "min": .double(r.lowerBound), "max": .double(r.upperBound)]
        case .autoOrDouble(let r):
            return ["type": .string("number"), "min": .int(0), "max": .double(r.upperBound)]
        default: return ["type": .string("json")]
        }
    }
}
