// SPDX-License-Identifier: BSD-2-Clause

/// Codable values to and from JSON text without FoundationEssentials' JSONEncoder and
/// JSONDecoder, whose Data and coding machinery are most of a static shutterctl
/// (issue 31: ~7 MiB). The text is JSONEncoder's with `[.sortedKeys,
/// .withoutEscapingSlashes]` (and `.prettyPrinted` when asked), byte for byte: keys in
/// byte order, numbers as Swift prints them less a trailing ".0", nil optionals left out,
/// the same escapes (tests compare the two). Decoding reads JSONParser's tree as
/// JSONDecoder reads JSON: a number where a number is, exact integers for integer types.
public enum PlainJSON {
    /// The value as JSON text (UTF-8 bytes, no newline at the end).
    public static func encode<T: Encodable>(_ value: T, pretty: Bool = false) throws -> [UInt8] {
        let root = EncodedNode.Box(.object([:]))
        try value.encode(to: NodeEncoder(box: root, codingPath: []))
        var out: [UInt8] = []
        out.reserveCapacity(256)
        root.node.render(into: &out, indent: pretty ? 0 : nil)
        return out
    }

    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try decode(type, from: String(decoding: bytes, as: UTF8.self))
    }

    public static func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        let value: JSONValue
        do { value = try JSONParser.parse(text).value } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not JSON: \(error)", underlyingError: error))
        }
        return try decode(type, from: value)
    }

    public static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try T(from: NodeDecoder(value: value, codingPath: []))
    }
}

// MARK: - Encoding

/// What an encoded value became: numbers keep the text JSONEncoder writes.
enum EncodedNode {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([Box])
    case object([String: Box])

    /// A node that containers fill in after handing it out (nested containers, super encoders).
    final class Box {
        var node: EncodedNode = .null
        init() {}
        init(_ node: EncodedNode) { self.node = node }
    }

    static func number<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: F, _ path: [any CodingKey]) throws -> EncodedNode {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "\(value) is not valid JSON"))
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return .number(text)
    }

    func render(into out: inout [UInt8], indent: Int?) {
        switch self {
        case .null: out += Array("null".utf8)
        case .bool(let b): out += Array((b ? "true" : "false").utf8)
        case .number(let text): out += Array(text.utf8)
        case .string(let s): Self.renderString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            // Pretty, an empty one is "[", an empty line, "]" (JSONEncoder's way).
            if items.isEmpty, let indent { out.append(0x0A); Self.newline(&out, indent) }
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if let indent { Self.newline(&out, indent + 1) }
                item.node.render(into: &out, indent: indent.map { $0 + 1 })
            }
            if !items.isEmpty, let indent { Self.newline(&out, indent) }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            if members.isEmpty, let indent { out.append(0x0A); Self.newline(&out, indent) }
            // JSONEncoder's .sortedKeys: byte order of the UTF-8 keys.
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (i, key) in keys.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if let indent { Self.newline(&out, indent + 1) }
                Self.renderString(key, into: &out)
                out += indent == nil ? [UInt8(ascii: ":")] : Array(" : ".utf8)
                members[key]!.node.render(into: &out, indent: indent.map { $0 + 1 })
            }
            if !members.isEmpty, let indent { Self.newline(&out, indent) }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A newline, then two spaces per level.
    private static func newline(_ out: inout [UInt8], _ level: Int) {
        out.append(0x0A)
        out += [UInt8](repeating: UInt8(ascii: " "), count: 2 * level)
    }

    private static func renderString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): out += [0x5C, b]
            case UInt8(ascii: "\\"): out += [0x5C, b]
            case 0x0A: out += Array("\\n".utf8)
            case 0x0D: out += Array("\\r".utf8)
            case 0x09: out += Array("\\t".utf8)
            case 0x08: out += Array("\\b".utf8)
            case 0x0C: out += Array("\\f".utf8)
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array("\\u00".utf8) + [hex[Int(b >> 4)], hex[Int(b & 0x0F)]]
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

private struct NodeEncoder: Encoder {
    let box: EncodedNode.Box
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = box.node {} else { box.node = .object([:]) }
        return KeyedEncodingContainer(KeyedNodeEncoder<Key>(box: box, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = box.node {} else { box.node = .array([]) }
        return UnkeyedNodeEncoder(box: box, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleNodeEncoder(box: box, codingPath: codingPath) }
}

/// One value's node from a scalar or a nested Encodable.
private func encodedNode<T: Encodable>(_ value: T, _ path: [any CodingKey]) throws -> EncodedNode.Box {
    switch value {
    case let v as Bool: return .init(.bool(v))
    case let v as String: return .init(.string(v))
    case let v as Double: return .init(try .number(v, path))
    case let v as Float: return .init(try .number(v, path))
    case let v as Int: return .init(.number(String(v)))
    case let v as Int8: return .init(.number(String(v)))
    case let v as Int16: return .init(.number(String(v)))
    case let v as Int32: return .init(.number(String(v)))
    case let v as Int64: return .init(.number(String(v)))
    case let v as UInt: return .init(.number(String(v)))
    case let v as UInt8: return .init(.number(String(v)))
    case let v as UInt16: return .init(.number(String(v)))
    case let v as UInt32: return .init(.number(String(v)))
    case let v as UInt64: return .init(.number(String(v)))
    default:
        // A value that encodes nothing stays an empty object, as JSONEncoder writes it.
        let box = EncodedNode.Box(.object([:]))
        try value.encode(to: NodeEncoder(box: box, codingPath: path))
        return box
    }
}

private struct KeyedNodeEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let box: EncodedNode.Box
    let codingPath: [any CodingKey]

    private func set(_ key: Key, _ child: EncodedNode.Box) {
        guard case .object(var members) = box.node else { return }
        members[key.stringValue] = child
        box.node = .object(members)
    }

    mutating func encodeNil(forKey key: Key) throws { set(key, .init(.null)) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        set(key, try encodedNode(value, codingPath + [key]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                         forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let child = EncodedNode.Box(.object([:]))
        set(key, child)
        return KeyedEncodingContainer(KeyedNodeEncoder<NestedKey>(box: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = EncodedNode.Box(.array([]))
        set(key, child)
        return UnkeyedNodeEncoder(box: child, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { superEncoder(forKey: Key(stringValue: "super")!) }
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let child = EncodedNode.Box()
        set(key, child)
        return NodeEncoder(box: child, codingPath: codingPath + [key])
    }
}

private struct IndexKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ index: Int) { stringValue = "Index \(index)"; intValue = index }
    init?(stringValue: String) { self.stringValue = stringValue; intValue = nil }
    init?(intValue: Int) { self.init(intValue) }
}

private struct UnkeyedNodeEncoder: UnkeyedEncodingContainer {
    let box: EncodedNode.Box
    let codingPath: [any CodingKey]
    var count: Int {
        if case .array(let items) = box.node { return items.count }
        return 0
    }

    private func append(_ child: EncodedNode.Box) {
        guard case .array(var items) = box.node else { return }
        items.append(child)
        box.node = .array(items)
    }

    mutating func encodeNil() throws { append(.init(.null)) }
    mutating func encode<T: Encodable>(_ value: T) throws { append(try encodedNode(value, codingPath + [IndexKey(count)])) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let child = EncodedNode.Box(.object([:]))
        let path = codingPath + [IndexKey(count)]
        append(child)
        return KeyedEncodingContainer(KeyedNodeEncoder<NestedKey>(box: child, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = EncodedNode.Box(.array([]))
        let path = codingPath + [IndexKey(count)]
        append(child)
        return UnkeyedNodeEncoder(box: child, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let child = EncodedNode.Box()
        let path = codingPath + [IndexKey(count)]
        append(child)
        return NodeEncoder(box: child, codingPath: path)
    }
}

private struct SingleNodeEncoder: SingleValueEncodingContainer {
    let box: EncodedNode.Box
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { box.node = .null }
    mutating func encode<T: Encodable>(_ value: T) throws { box.node = try encodedNode(value, codingPath).node }
}

// MARK: - Decoding

private struct NodeDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw mismatch([String: Any].self, value, codingPath) }
        return KeyedDecodingContainer(KeyedNodeDecoder<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else { throw mismatch([Any].self, value, codingPath) }
        return UnkeyedNodeDecoder(items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleNodeDecoder(value: value, codingPath: codingPath) }
}

private func mismatch(_ type: Any.Type, _ value: JSONValue, _ path: [any CodingKey]) -> DecodingError {
    if case .null = value {
        return .valueNotFound(type, .init(codingPath: path, debugDescription: "Expected \(type) value but found null instead."))
    }
    return .typeMismatch(type, .init(codingPath: path, debugDescription: "Expected to decode \(type) but found \(value.typeName) instead."))
}

/// A scalar or a nested Decodable from one node.
private func decodedValue<T: Decodable>(_ type: T.Type, _ value: JSONValue, _ path: [any CodingKey]) throws -> T {
    func integer<I: FixedWidthInteger>(_: I.Type) throws -> I {
        switch value {
        case .int(let i):
            if let v = I(exactly: i) { return v }
        case .double(let d):
            if let v = I(exactly: d) { return v }
        default: throw mismatch(I.self, value, path)
        }
        throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "Number \(value.rendered(pretty: false)) does not fit in \(I.self)."))
    }
    switch type {
    case is Bool.Type:
        guard case .bool(let b) = value else { throw mismatch(Bool.self, value, path) }
        return b as! T
    case is String.Type:
        guard case .string(let s) = value else { throw mismatch(String.self, value, path) }
        return s as! T
    case is Double.Type:
        guard let d = value.number else { throw mismatch(Double.self, value, path) }
        return d as! T
    case is Float.Type:
        guard let d = value.number else { throw mismatch(Float.self, value, path) }
        return Float(d) as! T
    case is Int.Type: return try integer(Int.self) as! T
    case is Int8.Type: return try integer(Int8.self) as! T
    case is Int16.Type: return try integer(Int16.self) as! T
    case is Int32.Type: return try integer(Int32.self) as! T
    case is Int64.Type: return try integer(Int64.self) as! T
    case is UInt.Type: return try integer(UInt.self) as! T
    case is UInt8.Type: return try integer(UInt8.self) as! T
    case is UInt16.Type: return try integer(UInt16.self) as! T
    case is UInt32.Type: return try integer(UInt32.self) as! T
    case is UInt64.Type: return try integer(UInt64.self) as! T
    default: return try T(from: NodeDecoder(value: value, codingPath: path))
    }
}

private struct KeyedNodeDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let codingPath: [any CodingKey]
    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func member(_ key: Key) throws -> JSONValue {
        guard let v = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath,
                                                       debugDescription: "No value associated with key \(key.stringValue)."))
        }
        return v
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try member(key) { return true }
        return false
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decodedValue(type, try member(key), codingPath + [key])
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let v = members[key.stringValue] else { return nil }
        if case .null = v { return nil }
        return try decodedValue(type, v, codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try NodeDecoder(value: try member(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try NodeDecoder(value: try member(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        NodeDecoder(value: members["super"] ?? .null, codingPath: codingPath)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        NodeDecoder(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

private struct UnkeyedNodeDecoder: UnkeyedDecodingContainer {
    let items: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    init(items: [JSONValue], codingPath: [any CodingKey]) {
        self.items = items
        self.codingPath = codingPath
    }

    private mutating func next(_ type: Any.Type) throws -> (JSONValue, [any CodingKey]) {
        let path = codingPath + [IndexKey(currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "Unkeyed container is at end."))
        }
        defer { currentIndex += 1 }
        return (items[currentIndex], path)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "Unkeyed container is at end.")) }
        if case .null = items[currentIndex] { currentIndex += 1; return true }
        return false
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (v, path) = try next(type)
        return try decodedValue(type, v, path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (v, path) = try next([String: Any].self)
        return try NodeDecoder(value: v, codingPath: path).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (v, path) = try next([Any].self)
        return try NodeDecoder(value: v, codingPath: path).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (v, path) = try next(Any.self)
        return NodeDecoder(value: v, codingPath: path)
    }
}

private struct SingleNodeDecoder: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool {
        if case .null = value { return true }
        return false
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodedValue(type, value, codingPath) }
}
