// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import ShutterCore

/// The rclone commands the uploader needs, each run to its end (blocking: on the uploads'
/// queue) by one long-lived `rclone rcd` (`RcloneDaemon`) at the lowest CPU and I/O priority.
/// A batch is named by a list of file names (`FilesFromRaw`), so one command serves many files.
struct Rclone: Sendable {
    let setup: UploadSetup
    let daemon: RcloneDaemon
    /// A folder for the lists and rclone's HOME (its cache), the service's temporary one.
    let scratch: String

    init(setup: UploadSetup, bandwidth: String, scratch: String) {
        self.setup = setup
        self.scratch = scratch
        daemon = RcloneDaemon(setup: setup, bandwidth: bandwidth, scratch: scratch)
    }

    /// A remote file as `lsjson --hash` lists it.
    struct Listed: Sendable, Equatable {
        var size: UInt64
        /// "md5" → hex, "sha1" → hex, ...: what the remote can tell.
        var hashes: [String: String]
    }

    struct Failure: Error, Sendable, CustomStringConvertible {
        let description: String
        /// The directory or file is not there.
        var notFound = false
        /// The remote could not be reached at all (no file of the batch is to blame).
        var unreachable = false
    }

    /// What a copy tells as it goes.
    enum Progress {
        /// The fraction sent (rclone's stats, each second).
        case sent(Double)
        /// A file's copy failed (the copy goes on with the others, then fails).
        case error(String)
    }

    /// Copies `names` from the local folder `from` to the remote folder `to`, telling
    /// `progress` as it goes, and hashes them on the card (`hashing`: "md5", ...) meanwhile;
    /// those hashes. A remote that stops answering fails it within about a minute (the
    /// daemon's `--timeout`), one that refuses at once within seconds.
    func copy(_ names: [String], from: String, to: String, hashing: String?,
              progress: @escaping (Progress) -> Void) throws(Failure) -> [String: String] {
        var said = ""
        return try withList(names) { list throws(Failure) in
            let hashJob = try hashing.map { h throws(Failure) in
                try daemon.start("operations/list", ["fs": .string(from), "remote": .string(""), "opt": .object(Self.listOptions(h)),
                                                     "_filter": list])
            }
            do throws(Failure) {
                // rclone's own hash check after each file is left out (IgnoreChecksum): ours
                // follows in `.shutter-incoming`, and on SFTP each check reads the file back.
                _ = try daemon.call("sync/copy", ["srcFs": .string(from), "dstFs": .string(to), "_filter": list,
                                                  "_config": .object(["IgnoreChecksum": .bool(true)])]) { stats in
                    if case .string(let error)? = stats["lastError"], !error.isEmpty, error != said {
                        said = error
                        progress(.error(String(error.prefix(400))))
                    }
                    guard let sent = stats["bytes"]?.number, let total = stats["totalBytes"]?.number, total > 0 else { return }
                    progress(.sent(min(1, max(0, sent / total))))
                }
            } catch {
                if let hashJob { daemon.abandon(hashJob) }
                throw error
            }
            guard let hashJob, let hashing else { return [:] }
            return try Self.listed(try daemon.wait(hashJob)).compactMapValues { $0.hashes[hashing] }
        }
    }

    /// Moves `names` from one remote folder to another (on the server where it can).
    func move(_ names: [String], from: String, to: String) throws(Failure) {
        _ = try withList(names) { list throws(Failure) in
            try daemon.call("sync/move", ["srcFs": .string(from), "dstFs": .string(to), "_filter": list,
                                          "_config": .object(["LowLevelRetries": .int(3)])])
        }
    }

    /// Moves one remote file to another name.
    func moveTo(_ from: String, _ to: String) throws(Failure) {
        let (fromFolder, fromName) = Self.split(from), (toFolder, toName) = Self.split(to)
        _ = try daemon.call("operations/movefile", ["srcFs": .string(fromFolder), "srcRemote": .string(fromName),
                                                    "dstFs": .string(toFolder), "dstRemote": .string(toName),
                                                    "_config": .object(["LowLevelRetries": .int(3)])])
    }

    func deleteFile(_ path: String) throws(Failure) {
        let (folder, name) = Self.split(path)
        _ = try daemon.call("operations/deletefile", ["fs": .string(folder), "remote": .string(name)])
    }

    /// What of `names` is in the folder `folder` (a remote's or the card's), with its `hash`
    /// ("md5", ...) where the remote has it.
    func list(_ names: [String], in folder: String, hash: String?) throws(Failure) -> [String: Listed] {
        let opt = Self.listOptions(hash)
        let out: JSONObject
        do throws(Failure) {
            out = try withList(names) { list throws(Failure) in
                try daemon.call("operations/list", ["fs": .string(folder), "remote": .string(""), "opt": .object(opt), "_filter": list])
            }
        } catch where error.notFound {
            return [:]
        }
        return try Self.listed(out)
    }

    /// operations/list's options: files only, with `hash` when given.
    static func listOptions(_ hash: String?) -> JSONObject {
        var opt: JSONObject = ["filesOnly": .bool(true), "noMimeType": .bool(true), "noModTime": .bool(true)]
        if let hash { opt["showHash"] = .bool(true); opt["hashTypes"] = .array([.string(hash)]) }
        return opt
    }

    /// The files of an operations/list output, by name.
    static func listed(_ out: JSONObject) throws(Failure) -> [String: Listed] {
        guard case .array(let items)? = out["list"] else { throw Failure(description: "rclone operations/list gave no list") }
        var found: [String: Listed] = [:]
        for case .object(let o) in items {
            // A size from the network, bounded before it becomes a UInt64 (a conversion that overflows traps).
            guard case .string(let path)? = o["Path"], let size = o["Size"]?.number, size.isFinite,
                  size < 9.0e18 else { continue }
            var hashes: [String: String] = [:]
            if case .object(let h)? = o["Hashes"] {
                for (k, v) in h { if case .string(let hex) = v, !hex.isEmpty { hashes[k.lowercased()] = hex.lowercased() } }
            }
            found[path] = Listed(size: UInt64(max(0, size)), hashes: hashes)
        }
        return found
    }

    /// What a remote is: the hashes it can tell ("md5", ...), and the folder on this machine
    /// it is when it is rclone's local backend (an alias of one included).
    struct Info: Sendable {
        var hashes: [String]
        var localRoot: String?
        /// Moves a file on the server itself (a rename), not by sending it again.
        var movesOnServer = false
        /// Its hashes are computed by reading the file back (SFTP's md5sum, a local disk),
        /// not kept with it (S3's ETag, WebDAV's checksum property).
        var slowHash = false
        /// Whether a copy moved to its final name is hashed again there: not where the move
        /// is a rename on the server and a hash reads the file back, for the moved file is
        /// the one whose hash was just checked (the start's second look hashes it again).
        var rehashAfterMove: Bool { !(movesOnServer && slowHash) }
    }

    func info(of remote: String) throws(Failure) -> Info {
        let o = try daemon.call("operations/fsinfo", ["fs": .string(remote)])
        var info = Info(hashes: [], localRoot: nil)
        if case .array(let h)? = o["Hashes"] { info.hashes = h.compactMap { if case .string(let t) = $0 { t.lowercased() } else { nil } } }
        if case .string(let what)? = o["String"], what.hasPrefix("Local file system at "),
           case .string(let root)? = o["Root"], root.hasPrefix("/") {
            info.localRoot = root
        }
        if case .object(let features)? = o["Features"] {
            if case .bool(let move)? = features["Move"] { info.movesOnServer = move }
            if case .bool(let slow)? = features["SlowHash"] { info.slowHash = slow }
        }
        return info
    }

    /// "nas:camera/x" and "a.jpg" of "nas:camera/x/a.jpg".
    static func split(_ path: String) -> (String, String) {
        (PlainIO.deletingLastComponent(path), PlainIO.lastComponent(path))
    }

    /// `body` given the filter that names `names` only (a list file in the scratch folder).
    private func withList<T>(_ names: [String], _ body: (JSONValue) throws(Failure) -> T) throws(Failure) -> T {
        let path = PlainIO.path(scratch, "files-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).txt")
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot write the list of files \(path): \(Self.errnoText())") }
        PlainIO.write(fd, names.joined(separator: "\n") + "\n")
        close(fd)
        defer { unlink(path) }
        return try body(.object(["FilesFromRaw": .array([.string(path)])]))
    }

    /// Writes the files in a local remote's `folder` and the folder itself to the disk. rclone's
    /// local backend does not: a power cut after a move can leave the final names committed
    /// by the file system's journal over data that never reached the disk (0-byte files).
    static func syncLocal(_ names: [String], in folder: String) throws(Failure) {
        for name in names + ["."] {
            let path = PlainIO.path(folder, name)
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw Failure(description: "cannot open \(path) to write it to the disk: \(errnoText())") }
            defer { close(fd) }
            guard fsync(fd) == 0 else { throw Failure(description: "cannot write \(path) to the disk: \(errnoText())") }
        }
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}
