// SPDX-License-Identifier: BSD-2-Clause

/// A board file, `boards/NAME.json`: the same schema as the config file, only
/// the keys that differ on that board (chip label, encoder, camera defaults).
/// It is the layer between the built-in defaults and the config file.
public struct BoardProfile: Equatable, Sendable {
    public var name: String
    /// The file it was read from.
    public var path: String
    /// The validated, normalized layer.
    public var layer: JSONValue

    /// Where board files are looked for, first match wins: an explicit
    /// directory (`--boards-dir`), `$SHUTTER_BOARDS_DIR`, the installed
    /// `/usr/share/shutter/boards`, and `./boards` (a source checkout).
    public static func searchPath(explicit: String? = nil,
                                  environment: [String: String] = PlainIO.environment) -> [String] {
        var dirs: [String] = []
        if let explicit, !explicit.isEmpty { dirs.append(explicit) }
        if let env = environment["SHUTTER_BOARDS_DIR"], !env.isEmpty { dirs.append(env) }
        dirs.append("/usr/share/shutter/boards")
        dirs.append("./boards")
        // Beside a build tree (.build/debug/shutterd -> ./boards) or an install prefix
        // (bin/shutterd -> share/shutter/boards), wherever the command is run from.
        var dir = PlainIO.deletingLastComponent(PlainIO.resolvedPath(CommandLine.arguments.first ?? ""))
        for _ in 0..<4 {
            dirs.append(PlainIO.path(dir, "share/shutter/boards"))
            dirs.append(PlainIO.path(dir, "boards"))
            dir = PlainIO.deletingLastComponent(dir)
        }
        return dirs
    }

    /// Finds `NAME.json` on the search path and loads it.
    public static func find(name: String, searchPath: [String]) throws(ConfigError) -> BoardProfile {
        for dir in searchPath where PlainIO.fileExists(PlainIO.path(dir, "\(name).json")) {
            return try load(name: name, directory: dir)
        }
        let known = Set(searchPath.flatMap(available(in:))).sorted()
        throw ConfigError(.boardNotFound, keyPath: "board.name", source: "board \"\(name)\"",
                          message: "no board file \(name).json in " + searchPath.joined(separator: ", ")
                            + (known.isEmpty ? "" : "; known boards: " + known.joined(separator: ", "))
                            + ConfigSchema.suggestion(for: name, among: known))
    }

    /// Loads and validates `directory/NAME.json`.
    public static func load(name: String, directory: String) throws(ConfigError) -> BoardProfile {
        do throws(ConfigSchema.Violation) {
            _ = try ConfigSchema.check(.string(name), for: ConfigSchema.byPath["board.name"]!)
        } catch {
            throw ConfigError(error.code, keyPath: "board.name", source: "board name", message: error.message)
        }
        let path = PlainIO.path(directory, "\(name).json")
        let document = try ConfigFile.read(path: path, what: "board file")
        let layer = try ConfigFile.validate(document, source: "board file \(path)")
        if let inFile = layer.value(at: "board.name"), inFile != .string(name) {
            throw ConfigError(.notAllowed, keyPath: "board.name", source: "board file \(path)",
                              message: "\"board.name\" is \(inFile.rendered(pretty: false)) but the file is \(name).json; they must match")
        }
        return BoardProfile(name: name, path: path, layer: layer)
    }

    /// Board names (file names without .json) in a directory.
    public static func available(in directory: String) -> [String] {
        let files = PlainIO.directoryEntries(directory) ?? []
        return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }
}
