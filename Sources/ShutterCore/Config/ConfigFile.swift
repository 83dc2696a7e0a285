// SPDX-License-Identifier: BSD-2-Clause

/// Reading one JSON configuration file (config or board) and validating it as
/// a layer, with errors that name the file and line.
public enum ConfigFile {
    /// The default system config file, used when `--config` is not given.
    public static let defaultPath = "/etc/shutter/shutter.json"

    public static func read(path: String, what: String = "config file") throws(ConfigError) -> JSONParser.Document {
        let bytes: [UInt8]
        do throws(PlainIO.Failure) {
            bytes = try PlainIO.readFile(path)
        } catch {
            guard let isDir = PlainIO.isDirectory(path) else {
                throw ConfigError(.fileMissing, source: "\(what) \(path)",
                                  message: "the file does not exist; create it or give another with --config")
            }
            throw ConfigError(.fileUnreadable, source: "\(what) \(path)",
                              message: isDir ? "this is a directory, not a JSON file"
                                : "the file cannot be read (check its permissions): \(error)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigError(.invalidJSON, source: "\(what) \(path)", message: "the file is not UTF-8 text")
        }
        do throws(JSONParser.SyntaxError) {
            return try JSONParser.parse(text)
        } catch {
            throw ConfigError(.invalidJSON, source: "\(what) \(path) line \(error.line) column \(error.column)",
                              message: "invalid JSON: \(error.reason)")
        }
    }

    /// Validates a parsed file as a layer; errors name `source` and the key's line.
    public static func validate(_ document: JSONParser.Document, source: String) throws(ConfigError) -> JSONValue {
        do throws(ConfigSchema.Violation) {
            return try ConfigSchema.validate(layer: document.value)
        } catch {
            let line = document.keyLines[error.keyPath].map { " line \($0)" } ?? ""
            throw ConfigError(error.code, keyPath: error.keyPath, source: source + line, message: error.message)
        }
    }
}
