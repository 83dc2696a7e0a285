// SPDX-License-Identifier: BSD-2-Clause
/// A number a request carries (a web query, header or JSON body, a control socket
/// command), read into a bounded range before any arithmetic touches it, or refused
/// with words that say what is allowed. The web API and the control socket read their
/// numbers through this one type (issue 23: an unchecked `?page=` overflowed and
/// killed the daemon). Every such number and its bounds is listed at the bottom.
public struct RequestNumber: Sendable {
    public enum Bounds: Sendable, Equatable {
        /// A whole number in the range.
        case integer(ClosedRange<Int>)
        /// A finite number in the range; `excludingLower`: the lower bound itself is refused.
        case real(ClosedRange<Double>, excludingLower: Bool)
    }

    /// The field's name as the client writes it ("page", "seconds").
    public let name: String
    public let bounds: Bounds
    /// Said after every refusal: how to ask right.
    public let usage: String

    public init(_ name: String, integer range: ClosedRange<Int>, usage: String = "") {
        self.name = name
        self.bounds = .integer(range)
        self.usage = usage
    }

    public init(_ name: String, real range: ClosedRange<Double>, excludingLower: Bool = false, usage: String = "") {
        self.name = name
        self.bounds = .real(range, excludingLower: excludingLower)
        self.usage = usage
    }

    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    // MARK: From text (query arguments, headers)

    /// Integers: ASCII digits with an optional leading minus. Reals: also one
    /// fraction and an exponent, as JSON writes numbers. No "+", spaces, hex,
    /// full-width digits, "nan" or "inf".
    public func integer(text: String) throws(Refusal) -> Int {
        let digits = text.utf8.first == UInt8(ascii: "-") ? text.utf8.dropFirst() : text.utf8[...]
        guard !digits.isEmpty, digits.count <= 19, digits.allSatisfy(Self.isDigit), let n = Int(text) else {
            throw refusal(shown: text)
        }
        return try integer(n, shown: text)
    }

    public func real(text: String) throws(Refusal) -> Double {
        guard !text.isEmpty, text.utf8.count <= 64, Self.isJSONNumber(text), let d = Double(text) else {
            throw refusal(shown: text)
        }
        return try real(d, shown: text)
    }

    // MARK: From JSON (request bodies, control socket lines)

    public func integer(json: JSONValue) throws(Refusal) -> Int {
        guard case .int(let n) = json else { throw refusal(shown: json.rendered(pretty: false)) }
        return try integer(n, shown: String(n))
    }

    public func real(json: JSONValue) throws(Refusal) -> Double {
        switch json {
        case .int(let n): return try real(Double(n), shown: String(n))
        case .double(let d): return try real(d, shown: json.rendered(pretty: false))
        default: throw refusal(shown: json.rendered(pretty: false))
        }
    }

    // MARK: The bounds

    private func integer(_ n: Int, shown: String) throws(Refusal) -> Int {
        guard case .integer(let range) = bounds, range.contains(n) else { throw refusal(shown: shown) }
        return n
    }

    private func real(_ d: Double, shown: String) throws(Refusal) -> Double {
        let ok: Bool
        switch bounds {
        case .integer:
            // A fraction (even 2.0) where a whole number is asked for.
            ok = false
        case .real(let range, let excludingLower):
            ok = d.isFinite && range.contains(d) && !(excludingLower && d == range.lowerBound)
        }
        guard ok else { throw refusal(shown: shown) }
        return d
    }

    /// What is allowed, in words: "a whole number from 1 to 100".
    public var allowed: String {
        switch bounds {
        case .integer(let r): return "a whole number from \(r.lowerBound) to \(r.upperBound)"
        case .real(let r, let excludingLower):
            return "a number from \(Self.short(r.lowerBound))\(excludingLower ? " (not included)" : "") to \(Self.short(r.upperBound))"
        }
    }

    private func refusal(shown: String) -> Refusal {
        let value = shown.isEmpty ? "empty" : "\"\(shown.count > 48 ? String(shown.prefix(48)) + "…" : shown)\""
        return Refusal(message: "\"\(name)\" must be \(allowed), not \(value)" + (usage.isEmpty ? "" : ": " + usage))
    }

    private static func short(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

    /// JSON's number grammar: -?digits(.digits)?([eE][+-]?digits)?
    private static func isJSONNumber(_ text: String) -> Bool {
        var bytes = text.utf8[...]
        func digits() -> Int {
            let n = bytes.prefix(while: isDigit).count
            bytes = bytes.dropFirst(n)
            return n
        }
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        guard digits() > 0 else { return false }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() > 0 else { return false }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}

/// Reading a control request's number field through its bounds (ControlRequest).
extension KeyedDecodingContainer {
    /// The field as a bounded number; nil when absent or null; a `RequestNumber.Refusal` otherwise.
    public func decodeIfPresent(_ number: RequestNumber, forKey key: Key) throws -> Double? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try number.real(json: decode(JSONValue.self, forKey: key))
    }
}

// MARK: Every number a request may carry

extension RequestNumber {
    /// Web, `GET /api/files?page=`: 1-based; there are at most 900 × 9999 files (DCF).
    public static let page = RequestNumber("page", integer: 1...8_999_100)
    /// Web, `GET /api/files?perPage=`.
    public static let perPage = RequestNumber("perPage", integer: 1...100)
    /// Web, a `Range` header's byte positions (a file's size is an off_t).
    public static let bytePosition = RequestNumber("byte position", integer: 0...Int.max)
    /// Control `hold`: how long to hold, up to an hour.
    public static let holdSeconds = RequestNumber("seconds", real: 0...3600, excludingLower: true,
                                                  usage: "hold needs \"seconds\" above 0, e.g. {\"cmd\":\"hold\",\"seconds\":3}")
    /// Control and web `focus`: the point of interest across and down the picture.
    public static let focusX = RequestNumber("x", real: 0...1, usage: PointOfInterest.usage)
    public static let focusY = RequestNumber("y", real: 0...1, usage: PointOfInterest.usage)
    /// Control `sim`: the simulated scene's light, darkness to well past full sun (~100 000 lux).
    public static let simLux = RequestNumber("lux", real: 0...1_000_000)
}
