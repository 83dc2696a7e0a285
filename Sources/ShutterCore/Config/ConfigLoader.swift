// SPDX-License-Identifier: BSD-2-Clause

/// Builds the effective configuration from its layers, lowest first:
/// built-in defaults ← board file ← config file ← command-line overrides.
/// Layers are merged as JSON trees and decoded once; each layer is validated
/// on its own first so an error names the file (and line) the bad key is in.
public enum ConfigLoader {
    /// - Parameters:
    ///   - configFile: `--config FILE`; must exist. Nil: `defaultConfigFile` if it exists.
    ///   - defaultConfigFile: the system file (nil in tests to ignore it).
    ///   - overrides: command-line settings, key path → text (`["storage.root": "./shutter-data"]`).
    ///   - detectedBoard: the board found by hardware detection, used when neither the
    ///     overrides nor the config file name one (`board.name`); else the default "sim".
    ///   - boardSearchPath: directories holding `NAME.json` board files.
    public static func load(configFile: String? = nil,
                            defaultConfigFile: String? = ConfigFile.defaultPath,
                            overrides: [String: String] = [:],
                            detectedBoard: String? = nil,
                            boardSearchPath: [String] = BoardProfile.searchPath(),
                            requireBoardFile: Bool = true) throws(ConfigError) -> ShutterConfig {
        var origins: [String: String] = [:]

        // Command line: parse and check first (cheapest, and it may choose the board).
        var overrideLayer = JSONValue.object([:])
        for path in overrides.keys.sorted() {
            let text = overrides[path]!
            let source = "command line (\(path)=\(text))"
            guard let key = ConfigSchema.byPath[path] else {
                throw ConfigError(.unknownKey, keyPath: path, source: source,
                                  message: "unknown key \"\(path)\""
                                    + ConfigSchema.suggestion(for: path, among: ConfigSchema.keys.map(\.path)))
            }
            do throws(ConfigSchema.Violation) {
                overrideLayer.setValue(try ConfigSchema.parseOverride(text, for: key), at: path)
            } catch {
                throw ConfigError(error.code, keyPath: path, source: source, message: error.message)
            }
            origins[path] = source
        }

        // Config file.
        var fileLayer = JSONValue.object([:])
        let filePath = configFile ?? defaultConfigFile.flatMap { PlainIO.fileExists($0) ? $0 : nil }
        if let filePath {
            let document = try ConfigFile.read(path: filePath)
            fileLayer = try ConfigFile.validate(document, source: "config file \(filePath)")
            for leaf in fileLayer.leaves() {
                origins[leaf.path] = "config file \(filePath)" + (document.keyLines[leaf.path].map { " line \($0)" } ?? "")
            }
        }

        // Board file.
        var boardName = ShutterConfig().board.name
        var boardSource = "default"
        if case .string(let n)? = overrideLayer.value(at: "board.name") {
            boardName = n; boardSource = origins["board.name"]!
        } else if case .string(let n)? = fileLayer.value(at: "board.name") {
            boardName = n; boardSource = origins["board.name"]!
        } else if let detectedBoard {
            boardName = detectedBoard; boardSource = "board detection"
        }
        var boardLayer = JSONValue.object([:])
        do throws(ConfigError) {
            let board = try BoardProfile.find(name: boardName, searchPath: boardSearchPath)
            boardLayer = board.layer
            for leaf in board.layer.leaves() where origins[leaf.path] == nil {
                origins[leaf.path] = "board file \(board.path)"
            }
        } catch {
            // Offline tools (gesture replay) run without board files unless one was asked for.
            if requireBoardFile || boardSource != "default" || error.code != .boardNotFound {
                var e = error
                e.source += " (chosen by \(boardSource))"
                throw e
            }
        }

        var merged = defaultsTree()
            .merged(with: boardLayer)
            .merged(with: fileLayer)
            .merged(with: overrideLayer)
        merged.setValue(.string(boardName), at: "board.name")

        let config: ShutterConfig
        do {
            config = try PlainJSON.decode(ShutterConfig.self, from: merged)
        } catch {
            // Unreachable when the schema matches ShutterConfig (a test checks it).
            throw ConfigError(.wrongType, source: "merged configuration",
                              message: "internal error: the validated configuration did not decode: \(error)")
        }
        if let v = ConfigSchema.crossCheck(config) {
            throw ConfigError(v.code, keyPath: v.keyPath, source: origins[v.keyPath] ?? "default", message: v.message)
        }
        return config
    }

    /// The built-in defaults as a normalized JSON tree.
    static func defaultsTree() -> JSONValue { ShutterConfig().tree() }
}

extension ShutterConfig {
    /// This configuration as a normalized JSON tree, every schema key present
    /// (unknown optional values as null).
    public func tree() -> JSONValue {
        // Encoding a plain value of Codable structs cannot fail.
        let data = (try? PlainJSON.encode(self)) ?? Array("{}".utf8)
        var value = (try? JSONParser.parse(String(decoding: data, as: UTF8.self)).value) ?? .object([:])
        for key in ConfigSchema.keys where value.value(at: key.path) == nil {
            value.setValue(.null, at: key.path)
        }
        // Normalizes numbers (PlainJSON, as JSONEncoder, writes 50.0 as 50); values are valid by construction.
        return (try? ConfigSchema.validate(layer: value)) ?? value
    }

    /// The effective configuration as pretty JSON with sorted keys, for
    /// `shutterd --print-config`; it reads back as a config file to the same value.
    public func printable() -> String { tree().rendered(pretty: true) + "\n" }
}
