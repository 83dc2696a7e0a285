// SPDX-License-Identifier: BSD-2-Clause
/// A JSON document as plain values. Configuration layers are merged as these
/// trees before one decode, and `--print-config` renders one. Integers and
/// fractions stay apart so `"holdMs": 1000.5` can be refused as a wrong type.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// A short name of the value's type, for error messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int: return "an integer"
        case .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// An integer or a fraction as a Double; nil for anything else.
    public var number: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    /// The value at a dotted key path ("button.holdMs"), if present.
    public func value(at path: String) -> JSONValue? {
        var node: JSONValue? = self
        for part in path.split(separator: ".", omittingEmptySubsequences: false) {
            node = node?[String(part)]
        }
        return node
    }

    /// Sets the value at a dotted key path, creating objects on the way.
    public mutating func setValue(_ value: JSONValue, at path: String) {
        let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        self = Self.setting(value, at: parts[...], in: self)
    }

    private static func setting(_ value: JSONValue, at parts: ArraySlice<String>, in node: JSONValue) -> JSONValue {
        guard let first = parts.first else { return value }
        var object: [String: JSONValue] = [:]
        if case .object(let o) = node { object = o }
        object[first] = setting(value, at: parts.dropFirst(), in: object[first] ?? .null)
        return .object(object)
    }

    /// `overlay` wins: objects merge key by key, anything else replaces.
    public func merged(with overlay: JSONValue) -> JSONValue {
        guard case .object(let base) = self, case .object(let top) = overlay else { return overlay }
        var out = base
        for (k, v) in top { out[k] = base[k].map { $0.merged(with: v) } ?? v }
        return .object(out)
    }

    /// Every leaf (non-object value) with its dotted path, sorted by path.
    public func leaves(prefix: String = "") -> [(path: String, value: JSONValue)] {
        guard case .object(let o) = self else { return [(prefix, self)] }
        var out: [(path: String, value: JSONValue)] = []
        for k in o.keys.sorted() {
            out += o[k]!.leaves(prefix: prefix.isEmpty ? k : "\(prefix).\(k)")
        }
        return out
    }

    /// JSON text with sorted keys: pretty (two-space indent) or compact.
    public func rendered(pretty: Bool = true) -> String {
        var out = ""
        render(into: &out, indent: pretty ? 0 : nil)
        return out
    }

    private func render(into out: inout String, indent: Int?) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            // Swift prints the shortest text that reads back to the same Double.
            out += d.isFinite ? "\(d)" : "null"
        case .string(let s): Self.renderString(s, into: &out)
        case .array(let a):
            if a.isEmpty { out += "[]"; return }
            out += "["
            for (i, v) in a.enumerated() {
                if i > 0 { out += "," }
                Self.newline(&out, indent.map { $0 + 1 })
                v.render(into: &out, indent: indent.map { $0 + 1 })
            }
            Self.newline(&out, indent)
            out += "]"
        case .object(let o):
            if o.isEmpty { out += "{}"; return }
            out += "{"
            for (i, k) in o.keys.sorted().enumerated() {
                if i > 0 { out += "," }
                Self.newline(&out, indent.map { $0 + 1 })
                Self.renderString(k, into: &out)
                out += indent == nil ? ":" : ": "
                o[k]!.render(into: &out, indent: indent.map { $0 + 1 })
            }
            Self.newline(&out, indent)
            out += "}"
        }
    }

    private static func newline(_ out: inout String, _ indent: Int?) {
        guard let indent else { return }
        out += "\n" + String(repeating: "  ", count: indent)
    }

    private static func renderString(_ s: String, into out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20:
                let hex = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(u)
            }
        }
        out += "\""
    }
}

/// On the control socket a setting's value travels as itself (`"value":[1.5,2]`,
/// `"value":null`), so requests and replies carry it as a JSONValue. An integer
/// stays an integer (a key of integers refuses 1.5 as the config file does).
extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? c.decode(Int.self) {
            self = .int(i)
        } else if let d = try? c.decode(Double.self) {
            self = .double(d)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .int(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }
}

/// A JSON object's members (a request, a reply, a live event's facts).
public typealias JSONObject = [String: JSONValue]
