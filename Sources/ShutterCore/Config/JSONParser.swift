// SPDX-License-Identifier: BSD-2-Clause
/// A strict JSON reader that knows where things are: a syntax error names its
/// line and column, and every object key keeps the line it was written on, so
/// a configuration error can point at `shutter.json line 12`. Duplicate keys
/// are refused (the second one would silently win otherwise).
public struct JSONParser {
    public struct SyntaxError: Error, Equatable, Sendable {
        public var line: Int
        public var column: Int
        public var reason: String
    }

    /// The document and the line of each key, by dotted path ("video.fps").
    public struct Document: Sendable {
        public var value: JSONValue
        public var keyLines: [String: Int]
    }

    public static func parse(_ text: String) throws(SyntaxError) -> Document {
        var p = JSONParser(bytes: Array(text.utf8))
        p.skipWhitespace()
        let value = try p.parseValue(path: "", depth: 0)
        p.skipWhitespace()
        if p.pos < p.bytes.count { throw p.error("unexpected text after the JSON value") }
        return Document(value: value, keyLines: p.keyLines)
    }

    private let bytes: [UInt8]
    private var pos = 0
    private var line = 1
    private var lineStart = 0
    private var keyLines: [String: Int] = [:]

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func error(_ reason: String) -> SyntaxError {
        SyntaxError(line: line, column: pos - lineStart + 1, reason: reason)
    }

    private var current: UInt8? { pos < bytes.count ? bytes[pos] : nil }

    private mutating func skipWhitespace() {
        while let c = current {
            if c == UInt8(ascii: "\n") { line += 1; lineStart = pos + 1 }
            guard c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D else { return }
            pos += 1
        }
    }

    private mutating func expect(_ c: UInt8, _ what: String) throws(SyntaxError) {
        guard current == c else { throw error("expected \(what)") }
        pos += 1
    }

    private mutating func parseValue(path: String, depth: Int) throws(SyntaxError) -> JSONValue {
        guard depth < 64 else { throw error("nested too deeply") }
        guard let c = current else { throw error("unexpected end of input") }
        switch c {
        case UInt8(ascii: "{"): return try parseObject(path: path, depth: depth)
        case UInt8(ascii: "["): return try parseArray(path: path, depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character '\(Character(Unicode.Scalar(c)))'")
        }
    }

    private mutating func literal(_ word: String) throws(SyntaxError) {
        for b in word.utf8 {
            guard current == b else { throw error("invalid literal (expected \(word))") }
            pos += 1
        }
    }

    private mutating func parseObject(path: String, depth: Int) throws(SyntaxError) -> JSONValue {
        pos += 1
        var out: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") { pos += 1; return .object(out) }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("expected a quoted key") }
            let keyLine = line
            let key = try parseString()
            let keyPath = path.isEmpty ? key : "\(path).\(key)"
            if out[key] != nil { throw error("duplicate key \"\(keyPath)\"") }
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "':' after key \"\(keyPath)\"")
            skipWhitespace()
            keyLines[keyPath] = keyLine
            out[key] = try parseValue(path: keyPath, depth: depth + 1)
            skipWhitespace()
            if current == UInt8(ascii: ",") { pos += 1; continue }
            if current == UInt8(ascii: "}") { pos += 1; return .object(out) }
            throw error("expected ',' or '}' after the value of \"\(keyPath)\"")
        }
    }

    private mutating func parseArray(path: String, depth: Int) throws(SyntaxError) -> JSONValue {
        pos += 1
        var out: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") { pos += 1; return .array(out) }
        while true {
            skipWhitespace()
            out.append(try parseValue(path: "\(path)[\(out.count)]", depth: depth + 1))
            skipWhitespace()
            if current == UInt8(ascii: ",") { pos += 1; continue }
            if current == UInt8(ascii: "]") { pos += 1; return .array(out) }
            throw error("expected ',' or ']'")
        }
    }

    private mutating func parseString() throws(SyntaxError) -> String {
        pos += 1
        var scalars = String.UnicodeScalarView()
        var raw: [UInt8] = []
        func flush() { scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars); raw.removeAll() }
        while true {
            guard let c = current else { throw error("unterminated string") }
            pos += 1
            switch c {
            case UInt8(ascii: "\""):
                flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush()
                guard let e = current else { throw error("unterminated string") }
                pos += 1
                switch e {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var v = try hex4()
                    if (0xD800..<0xDC00).contains(v) {
                        // A surrogate pair spells one scalar above U+FFFF.
                        try literal("\\u")
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw error("invalid surrogate pair") }
                        v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let s = Unicode.Scalar(v) else { throw error("invalid \\u escape") }
                    scalars.append(s)
                default: throw error("invalid escape '\\\(Character(Unicode.Scalar(e)))'")
                }
            case 0..<0x20:
                throw error("control character in string (a string cannot span lines)")
            default:
                raw.append(c)
            }
        }
    }

    private mutating func hex4() throws(SyntaxError) -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard let c = current, let d = Self.hexDigit(c) else { throw error("invalid \\u escape") }
            v = v << 4 | d
            pos += 1
        }
        return v
    }

    private static func hexDigit(_ c: UInt8) -> UInt32? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(c - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(c - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(c - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    private mutating func parseNumber() throws(SyntaxError) -> JSONValue {
        let start = pos
        var isInteger = true
        func digits() -> Int {
            var n = 0
            while let c = current, c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") { pos += 1; n += 1 }
            return n
        }
        if current == UInt8(ascii: "-") { pos += 1 }
        let intStart = pos
        guard digits() > 0 else { throw error("invalid number") }
        if bytes[intStart] == UInt8(ascii: "0"), pos - intStart > 1 { throw error("invalid number (leading zero)") }
        if current == UInt8(ascii: ".") {
            pos += 1; isInteger = false
            guard digits() > 0 else { throw error("invalid number (digits expected after '.')") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            pos += 1; isInteger = false
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { pos += 1 }
            guard digits() > 0 else { throw error("invalid number (digits expected in exponent)") }
        }
        let text = String(decoding: bytes[start..<pos], as: UTF8.self)
        if isInteger, let i = Int(text) { return .int(i) }
        guard let d = Double(text), d.isFinite else { throw error("number out of range") }
        return .double(d)
    }
}
