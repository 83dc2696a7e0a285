// SPDX-License-Identifier: BSD-2-Clause
/// One sensor control as `CameraControls.table` declares it, once: the
/// configuration keys that carry it (path, value in `CameraControls`, type and
/// bounds), when a value asks something of the camera, why a camera without it
/// cannot do that, and how it becomes libcamera controls. The config schema,
/// the JSON of `CameraControls`, `requestedControls` and what is lacking, and
/// the libcamera plan are all read from the table.
public struct CameraControl: Sendable {
    /// libcamera's name of the control: how the report names it when a camera lacks it.
    public let id: CameraControlID
    /// The configuration keys that carry it: one, but for ScalerCrop (zoom and roi).
    public let keys: [Key]
    /// Why a camera without it cannot do what was asked, in words.
    public let lackingReason: String
    /// How it becomes libcamera controls.
    public let libcamera: Libcamera
    private let asks: @Sendable (CameraControls) -> Bool

    /// `asks` nil: a value asks for the control when one of its keys is off its default.
    init(_ id: CameraControlID, _ keys: Key..., asks: (@Sendable (CameraControls) -> Bool)? = nil,
         lacking reason: String = "not supported by this camera", libcamera: Libcamera) {
        self.id = id
        self.keys = keys
        self.asks = asks ?? { c in keys.contains { !$0.isDefault(c) } }
        lackingReason = reason
        self.libcamera = libcamera
    }

    /// Whether `controls` ask for this control: a camera lacking it cannot honour them.
    public func isAsked(by controls: CameraControls) -> Bool { asks(controls) }

    /// One configuration key: its path, its type and bounds (the schema's
    /// entry) and where its value lives in `CameraControls`. The path below
    /// `camera.` is the value's place in the JSON: `camera.focus.window` is
    /// `"window"` in the object `"focus"`.
    public struct Key: Sendable {
        public let path: String
        public let kind: ConfigSchema.Kind
        /// The object it is in ("focus"; nil for a key of `camera` itself, "zoom") and its name there.
        let group: String?
        let name: String
        let isDefault: @Sendable (CameraControls) -> Bool
        let encode: @Sendable (CameraControls, inout KeyedEncodingContainer<CodingName>) throws -> Void
        let decode: @Sendable (inout CameraControls, KeyedDecodingContainer<CodingName>) throws -> Void

        private init(path: String, kind: ConfigSchema.Kind, isDefault: @escaping @Sendable (CameraControls) -> Bool,
                     encode: @escaping @Sendable (CameraControls, inout KeyedEncodingContainer<CodingName>, CodingName) throws -> Void,
                     decode: @escaping @Sendable (inout CameraControls, KeyedDecodingContainer<CodingName>, CodingName) throws -> Void) {
            let parts = path.split(separator: ".").dropFirst().map(String.init)
            precondition(path.hasPrefix("camera.") && (1...2).contains(parts.count), "\(path): not a camera.* key")
            self.path = path
            self.kind = kind
            group = parts.count == 2 ? parts[0] : nil
            name = parts[parts.count - 1]
            let name = CodingName(name)
            self.isDefault = isDefault
            self.encode = { try encode($0, &$1, name) }
            self.decode = { try decode(&$0, $1, name) }
        }

        /// A key whose value is always there.
        init<V: Codable & Equatable & Sendable>(path: String, kind: ConfigSchema.Kind,
                                                 at value: WritableKeyPath<CameraControls, V> & Sendable) {
            self.init(path: path, kind: kind, isDefault: { $0[keyPath: value] == CameraControls()[keyPath: value] },
                      encode: { try $1.encode($0[keyPath: value], forKey: $2) },
                      decode: { $0[keyPath: value] = try $1.decode(V.self, forKey: $2) })
        }

        /// A key that may be null (= not set), shown as null, never left out.
        init<V: Codable & Equatable & Sendable>(path: String, kind: ConfigSchema.Kind,
                                                 at value: WritableKeyPath<CameraControls, V?> & Sendable) {
            self.init(path: path, kind: kind, isDefault: { $0[keyPath: value] == CameraControls()[keyPath: value] },
                      encode: { try $1.encode($0[keyPath: value], forKey: $2) },
                      decode: { $0[keyPath: value] = try $1.decodeIfPresent(V.self, forKey: $2) })
        }
    }

    /// How a control becomes libcamera controls in `CameraControls.libcameraPlan`.
    public enum Libcamera: Sendable {
        /// The libcamera control of the control's own name, one number: set
        /// where the camera has it (so going back to the default undoes a
        /// change), left out where it does not, and then lacking if asked for.
        case number(@Sendable (CameraControls, CameraStreamRole) -> Double)
        /// libcamera has no control for it: lacking whenever asked for.
        case noControl
        /// A rule of its own, which may set the libcamera controls `names`
        /// (mode controls that go first, several values, facts of the camera).
        case rule(names: [String], @Sendable (inout LibcameraPlanning) -> Void)

        /// The libcamera controls it may set or looks for on a camera.
        func names(of id: CameraControlID) -> [String] {
            switch self {
            case .number: return [id.rawValue]
            case .noControl: return []
            case .rule(let names, _): return names
            }
        }
    }

    /// The libcamera controls it may set or looks for on a camera.
    public var libcameraNames: [String] { libcamera.names(of: id) }

    /// A key's name in a JSON object.
    struct CodingName: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.init(stringValue) }
        init?(intValue: Int) { nil }
    }
}

/// A control by libcamera's name ("AfMode"), which is how a camera (real or
/// simulated) says which one it lacks. The controls are `CameraControls.table`'s.
public struct CameraControlID: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral name: String) { rawValue = name }

    /// Every control of the table, in its order.
    public static var allCases: [CameraControlID] { CameraControls.table.map(\.id) }

    /// The table's entry; nil for a name it does not have.
    public var control: CameraControl? { CameraControls.control(self) }
    /// The configuration keys this control carries.
    public var keys: [String] { control?.keys.map(\.path) ?? [] }
    /// Why a camera without this control cannot do what was asked, in words.
    public var lackingReason: String { control?.lackingReason ?? "not supported by this camera" }

    public var description: String { rawValue }
}

extension CameraControls {
    /// The table's entry for `id`.
    public static func control(_ id: CameraControlID) -> CameraControl? { byID[id] }

    /// The control a libcamera control serves (the mode and enable controls
    /// belong to the value they switch: AeEnable to ExposureTime, AfMetering to AfWindows).
    public static func control(forLibcameraName name: String) -> CameraControl? {
        table.first { $0.id.rawValue == name } ?? table.first { $0.libcameraNames.contains(name) }
    }

    private static let byID = Dictionary(uniqueKeysWithValues: table.map { ($0.id, $0) })

    /// The configuration keys of every control, in the table's order (the schema's `camera.*` sensor keys).
    public static let configKeys: [CameraControl.Key] = table.flatMap(\.keys)

    /// The controls this value asks for: those not at their default, which a
    /// camera lacking them cannot honour. A control at its default is set where
    /// the camera has it and quietly left out where it does not (a camera
    /// without it behaves that way anyway).
    public var requestedControls: [CameraControlID] { Self.table.filter { $0.isAsked(by: self) }.map(\.id) }
}

/// The JSON of the controls, key for key from the table: objects of keys
/// (`"exposure": {...}`) and keys of their own (`"zoom"`), an unset value as
/// null (so `status` and `--print-config` show it).
extension CameraControls: Codable {
    /// The table's keys by the object they are in, in the table's order.
    private static let keysByGroup: [(group: String?, keys: [CameraControl.Key])] = configKeys.reduce(into: []) { out, key in
        if let i = out.firstIndex(where: { $0.group == key.group }) {
            out[i].keys.append(key)
        } else {
            out.append((key.group, [key]))
        }
    }

    public init(from decoder: any Decoder) throws {
        self.init()
        let top = try decoder.container(keyedBy: CameraControl.CodingName.self)
        for (group, keys) in Self.keysByGroup {
            let c = try group.map { try top.nestedContainer(keyedBy: CameraControl.CodingName.self, forKey: .init($0)) } ?? top
            for key in keys { try key.decode(&self, c) }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var top = encoder.container(keyedBy: CameraControl.CodingName.self)
        for (group, keys) in Self.keysByGroup {
            if let group {
                var c = top.nestedContainer(keyedBy: CameraControl.CodingName.self, forKey: .init(group))
                for key in keys { try key.encode(self, &c) }
            } else {
                for key in keys { try key.encode(self, &top) }
            }
        }
    }
}
