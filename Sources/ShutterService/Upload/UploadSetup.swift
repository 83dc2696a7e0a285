// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterStorage

/// The checks made before the first upload, each failure naming its key and what to do:
/// rclone installed, its configuration file readable, the remote named in it.
struct UploadSetup: Sendable {
    let rclone: String
    /// The configuration rclone is given: a private copy of upload.rcloneConfig
    /// (`withConfigCopy`), which rclone may rewrite (it saves what it learns of an SFTP
    /// server's shell; a login refreshes its token), where /etc/shutter is read-only to it.
    private(set) var rcloneConfig: String
    /// Its text, as read at the check.
    let configText: String
    /// "nas" of "nas:camera/garden", and the path after the colon.
    let remoteName: String
    let remotePath: String

    /// The remote and path joined with `rest` ("nas:camera/garden/2026/12/05").
    func remote(_ rest: String) -> String {
        let base = remotePath.isEmpty ? "" : (remotePath.hasSuffix("/") ? remotePath : remotePath + "/")
        return remoteName + ":" + base + rest
    }

    static func check(_ config: ShutterConfig.Upload) -> Result<UploadSetup, UploadProblem> {
        guard access(config.rclone, X_OK) == 0 else {
            return .failure(UploadProblem("upload.rclone: \(config.rclone) is not there or not runnable (\(errnoText())): "
                                          + "install rclone (`sudo apt install rclone`) or set upload.rclone to its path"))
        }
        guard let colon = config.remote.firstIndex(of: ":"), colon != config.remote.startIndex else {
            return .failure(UploadProblem("upload.remote: \"\(config.remote)\" is not an rclone remote and path "
                                          + "(\"NAME:PATH\", e.g. \"nas:camera/garden\")"))
        }
        let name = String(config.remote[..<colon])
        let path = String(config.remote[config.remote.index(after: colon)...])
        let text: String
        switch readText(config.rcloneConfig) {
        case .success(let t): text = t
        case .failure(let why):
            return .failure(UploadProblem("upload.rcloneConfig: cannot read \(config.rcloneConfig) (\(why)); write it with "
                                          + "`sudo rclone config --config \(config.rcloneConfig)` and let the service's user "
                                          + "read it (`sudo chgrp shutter \(config.rcloneConfig); sudo chmod 640 "
                                          + "\(config.rcloneConfig)`)"))
        }
        let remotes = sections(text)
        guard remotes.contains(name) else {
            let known = remotes.isEmpty ? "it names none" : "it has " + remotes.map { "\"\($0)\"" }.joined(separator: ", ")
            return .failure(UploadProblem("upload.remote: no remote \"\(name)\" in \(config.rcloneConfig) (\(known)); add it with "
                                          + "`sudo rclone config --config \(config.rcloneConfig)`"))
        }
        return .success(UploadSetup(rclone: config.rclone, rcloneConfig: config.rcloneConfig, configText: text,
                                    remoteName: name, remotePath: path))
    }

    /// The same, rclone given a copy of the configuration in `folder` (private to the service).
    func withConfigCopy(in folder: String) -> Result<UploadSetup, UploadProblem> {
        let path = PlainIO.path(folder, "rclone.conf")
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            return .failure(UploadProblem("cannot copy upload.rcloneConfig to \(path): \(String(cString: strerror(errno)))"))
        }
        PlainIO.write(fd, configText)
        close(fd)
        var copy = self
        copy.rcloneConfig = path
        return .success(copy)
    }

    /// The "[name]" sections of an rclone configuration file.
    static func sections(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).compactMap { line in
            let t = String(line).trimmedWhitespace
            guard t.hasPrefix("["), t.hasSuffix("]"), t.count > 2 else { return nil }
            return String(t.dropFirst().dropLast())
        }
    }

    private static func readText(_ path: String) -> Result<String, UploadProblem> {
        do {
            guard let bytes = try AtomicFile.read(path, limit: 1 << 20) else { return .failure(UploadProblem("no such file")) }
            return .success(String(decoding: bytes, as: UTF8.self))
        } catch {
            return .failure(UploadProblem("\(error)"))
        }
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}

/// Why uploads cannot go on, in words that say what to do.
struct UploadProblem: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
