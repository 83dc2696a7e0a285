// SPDX-License-Identifier: BSD-2-Clause

/// The settings a running service may change (`shutterctl set`): the sensor
/// controls (`camera.exposure.*` ... `camera.hdr`), the size preference lists
/// (`video.sizes`, `still.sizes`: the camera restarts), `flash.mode` and
/// `video.torch`. It holds the configuration file's values (`base`) and the
/// runtime changes over them: the changes win, also over a config file reread
/// on SIGHUP, until they are reset, and they are what the state file keeps.
///
/// A value is checked by `ConfigSchema.check`, the code that checks the config
/// file, so a refusal reads like a configuration error (key, value, what is allowed).
public struct RuntimeSettings: Equatable, Sendable {
    /// Every key that can change while the service runs, in the schema's order.
    public static let settableKeys: [String] = ConfigSchema.keys.map(\.path).filter(isSettable)

    /// The sensor controls, the flash mode and the torch: what a running camera
    /// takes between captures; and the size preference lists, which restart
    /// the camera (`CameraOpening`). The encoder, the frame rate, `video.width`,
    /// pins... need the service restarted.
    public static func isSettable(_ path: String) -> Bool {
        guard ConfigSchema.byPath[path] != nil else { return false }
        return CameraControls.configKeys.contains { $0.path == path }
            || ["flash.mode", "video.torch", "video.sizes", "still.sizes"].contains(path)
    }

    /// The configuration as loaded (defaults ← board ← file ← command line).
    public private(set) var base: ShutterConfig
    /// Runtime changes, key path → normalized value.
    public private(set) var changes: [String: JSONValue]
    /// `base` with the changes over it: what the service runs with.
    public private(set) var effective: ShutterConfig
    /// The camera `shutterctl camera` switched to; nil = the configuration's
    /// choice (`camera.index` / `camera.model`). Kept apart from `changes`:
    /// `reset` leaves it, another `shutterctl camera` changes it.
    public var camera: CameraPick?

    /// The state file's key for `camera`: not a configuration key, so it cannot
    /// be mistaken for `camera.index` (whose meaning differs: see `CameraPick`).
    public static let cameraStateKey = "cameraInUse"

    /// `changes` must be valid (from `set`, or `parseState`).
    public init(base: ShutterConfig, changes: [String: JSONValue] = [:], camera: CameraPick? = nil) {
        self.base = base
        self.changes = changes
        self.camera = camera
        effective = Self.merge(base, changes)
    }

    /// Nothing to remember: no change and no camera switched to.
    public var isEmpty: Bool { changes.isEmpty && camera == nil }

    /// The key's schema entry, if it can be set at runtime; else the error a
    /// config file with that key would get (unknown key, "did you mean").
    public static func settableKey(_ path: String, source: String) throws(ConfigError) -> ConfigSchema.Key {
        guard let key = ConfigSchema.byPath[path] else {
            throw ConfigError(.unknownKey, keyPath: path, source: source,
                              message: "unknown key \"\(path)\"" + ConfigSchema.suggestion(for: path, among: settableKeys))
        }
        guard isSettable(path) else {
            throw ConfigError(.notAllowed, keyPath: path, source: source,
                              message: "\"\(path)\" cannot change while shutterd runs; edit the config file and "
                                + "restart it (settable: the camera.* sensor controls, video.sizes, still.sizes, flash.mode, video.torch)")
        }
        return key
    }

    /// Checks `value` for `path` as the config file's loader does and keeps it
    /// as a runtime change; returns it normalized (2 for `camera.zoom` is 2.0).
    @discardableResult
    public mutating func set(_ path: String, to value: JSONValue, source: String = "shutterctl set")
        throws(ConfigError) -> JSONValue
    {
        let key = try Self.settableKey(path, source: source)
        let normalized: JSONValue
        do throws(ConfigSchema.Violation) {
            normalized = try ConfigSchema.check(value, for: key)
        } catch {
            throw ConfigError(error.code, keyPath: path, source: source, message: error.message)
        }
        var next = changes
        next[path] = normalized
        let merged = Self.merge(base, next)
        if let v = ConfigSchema.crossCheck(merged) {
            throw ConfigError(v.code, keyPath: v.keyPath, source: source, message: v.message)
        }
        changes = next
        effective = merged
        return normalized
    }

    /// Drops the runtime change of `path` (back to the config file's value);
    /// false when there was none.
    @discardableResult
    public mutating func reset(_ path: String, source: String = "shutterctl reset") throws(ConfigError) -> Bool {
        _ = try Self.settableKey(path, source: source)
        guard changes.removeValue(forKey: path) != nil else { return false }
        effective = Self.merge(base, changes)
        return true
    }

    /// Drops every runtime change; returns their keys.
    @discardableResult
    public mutating func resetAll() -> [String] {
        let keys = changes.keys.sorted()
        changes = [:]
        effective = base
        return keys
    }

    /// A reread configuration: its values under the same runtime changes.
    public mutating func rebase(_ config: ShutterConfig) {
        base = config
        effective = Self.merge(base, changes)
    }

    /// The value in effect for a settable key.
    public func value(of path: String) -> JSONValue { effective.tree().value(at: path) ?? .null }

    private static func merge(_ base: ShutterConfig, _ changes: [String: JSONValue]) -> ShutterConfig {
        guard !changes.isEmpty else { return base }
        var tree = base.tree()
        for (path, value) in changes { tree.setValue(value, at: path) }
        // Valid values of valid keys always decode; the fallback only guards a schema slip.
        return (try? PlainJSON.decode(ShutterConfig.self, from: tree)) ?? base
    }

    // MARK: The state file

    /// The changes as the state file holds them: nested like the config file
    /// (`{"camera": {"exposure": {"ev": 2}}}`), so it reads as one.
    public var stateDocument: String {
        var tree = JSONValue.object([:])
        for (path, value) in changes { tree.setValue(value, at: path) }
        if let camera {
            tree.setValue(.object(["index": .int(camera.index), "model": .string(camera.model)]), at: Self.cameraStateKey)
        }
        return tree.rendered(pretty: true) + "\n"
    }

    /// A state file's changes. Throws for a file that is not a JSON object (a
    /// corrupt file); a key this version cannot set, or a value its schema
    /// refuses, is left out and named in `dropped` with why.
    public static func parseState(_ text: String) throws(ConfigError)
        -> (changes: [String: JSONValue], camera: CameraPick?, dropped: [String])
    {
        let document: JSONParser.Document
        do throws(JSONParser.SyntaxError) {
            document = try JSONParser.parse(text)
        } catch {
            throw ConfigError(.invalidJSON, source: "line \(error.line) column \(error.column)",
                              message: "invalid JSON: \(error.reason)")
        }
        guard case .object = document.value else {
            throw ConfigError(.wrongType, source: "top level", message: "not a JSON object but \(document.value.typeName)")
        }
        var changes: [String: JSONValue] = [:]
        var dropped: [String] = []
        var camera: CameraPick?
        if let c = document.value[cameraStateKey] {
            if case .int(let i)? = c["index"], i >= 0, case .string(let m)? = c["model"] {
                camera = CameraPick(index: i, model: m)
            } else {
                dropped.append("\(cameraStateKey): not {\"index\": N, \"model\": NAME} but \(c.rendered(pretty: false))")
            }
        }
        for leaf in document.value.leaves() where !leaf.path.hasPrefix(cameraStateKey + ".") && leaf.path != cameraStateKey {
            guard let key = ConfigSchema.byPath[leaf.path], isSettable(leaf.path) else {
                dropped.append("\(leaf.path): not a setting this version knows")
                continue
            }
            do throws(ConfigSchema.Violation) {
                changes[leaf.path] = try ConfigSchema.check(leaf.value, for: key)
            } catch {
                dropped.append("\(leaf.path): \(error.message)")
            }
        }
        return (changes, camera, dropped)
    }
}
