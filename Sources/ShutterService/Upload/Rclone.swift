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
/// queue), at the lowest CPU and I/O priority. A batch is named by a list of file names
/// (`--files-from-raw`), so one command serves many files: rclone's start-up is paid once a
/// batch, not once a file.
struct Rclone: Sendable {
    let setup: UploadSetup
    let bandwidth: String
    let process: ChildProcess
    /// A folder for the lists and rclone's HOME (its cache), the service's temporary one.
    let scratch: String

    /// A remote file as `lsjson --hash` lists it.
    struct Listed: Sendable, Equatable {
        var size: UInt64
        /// "md5" → hex, "sha1" → hex, ...: what the remote can tell.
        var hashes: [String: String]
    }

    struct Failure: Error, Sendable, CustomStringConvertible {
        let description: String
        /// rclone's exit status 3 or 4: the directory or file is not there.
        var notFound = false
        /// The remote could not be reached at all (no file of the batch is to blame).
        var unreachable = false
    }

    /// What a line of a copy's output tells as it goes.
    enum Progress {
        /// The fraction sent (rclone's stats, each second).
        case sent(Double)
        /// A file's copy failed (the copy goes on with the others, then fails).
        case error(String)
    }

    /// Copies `names` from the local folder `from` to the remote folder `to`, telling
    /// `progress` as it goes. A remote that stops answering fails it within about a minute
    /// (`--timeout`), one that refuses at once within seconds (one low-level retry).
    func copy(_ names: [String], from: String, to: String, progress: @escaping (Progress) -> Void) throws(Failure) {
        // Not --no-traverse: it stats each file on both sides, one round trip per file (43
        // files on loopback SFTP: 1.03 s against 0.34 s listing the two folders once).
        var args = ["copy", from, to, "--transfers", "2", "--retries", "1", "--low-level-retries", "1",
                    "--contimeout", "15s", "--timeout", "60s",
                    "--stats", "1s", "--stats-one-line", "--stats-log-level", "NOTICE"]
        if !bandwidth.isEmpty { args += ["--bwlimit", bandwidth] }
        _ = try run(args, names: names) { line in
            if line.contains(" ERROR : ") {
                progress(.error(Self.reason(line)))
                return
            }
            // "... NOTICE:   1.2 MiB / 3.4 MiB, 36%, 100 KiB/s, ETA 22s"
            guard let pct = line.split(separator: ",").dropFirst().first?.trimmedWhitespace,
                  pct.hasSuffix("%"), let p = Double(pct.dropLast()) else { return }
            progress(.sent(min(1, max(0, p / 100))))
        }
    }

    /// Moves `names` from one remote folder to another (on the server where it can). Both
    /// folders are listed once (see `copy`: 1.46 s for 43 files with --no-traverse, 0.48 s without).
    func move(_ names: [String], from: String, to: String) throws(Failure) {
        _ = try run(["move", from, to, "--retries", "1", "--low-level-retries", "3"], names: names)
    }

    /// Moves one remote file to another name.
    func moveTo(_ from: String, _ to: String) throws(Failure) {
        _ = try run(["moveto", from, to, "--retries", "1", "--low-level-retries", "3"], names: nil)
    }

    func deleteFile(_ path: String) throws(Failure) {
        _ = try run(["deletefile", path, "--retries", "1"], names: nil)
    }

    /// What of `names` is in the remote folder `folder`, with the hashes the remote has.
    func list(_ names: [String], in folder: String) throws(Failure) -> [String: Listed] {
        let out: [UInt8]
        do {
            out = try run(["lsjson", folder, "--hash", "--files-only", "--no-mimetype"], names: names)
        } catch where error.notFound {
            return [:]
        }
        guard case .array(let items)? = try? JSONParser.parse(String(decoding: out, as: UTF8.self)).value else {
            throw Failure(description: "rclone lsjson printed no list")
        }
        var found: [String: Listed] = [:]
        for case .object(let o) in items {
            guard case .string(let path)? = o["Path"], let size = o["Size"]?.number else { continue }
            var hashes: [String: String] = [:]
            if case .object(let h)? = o["Hashes"] {
                for (k, v) in h { if case .string(let hex) = v, !hex.isEmpty { hashes[k.lowercased()] = hex.lowercased() } }
            }
            found[path] = Listed(size: UInt64(max(0, size)), hashes: hashes)
        }
        return found
    }

    /// The folder on this machine a remote path is, when the remote is rclone's local backend
    /// (an alias of one included); nil for any other backend.
    func localFolder(of remote: String) throws(Failure) -> String? {
        let out = try run(["backend", "features", remote], names: nil)
        guard case .object(let o)? = try? JSONParser.parse(String(decoding: out, as: UTF8.self)).value,
              case .string(let what)? = o["String"], what.hasPrefix("Local file system at "),
              case .string(let root)? = o["Root"], root.hasPrefix("/") else { return nil }
        return root
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

    /// The local files' hashes of `type` ("md5", "sha1", ...), by name.
    func hashes(_ names: [String], in folder: String, type: String) throws(Failure) -> [String: String] {
        let out = try run(["hashsum", type.uppercased() == "SHA1" ? "SHA-1" : type.uppercased(), folder], names: names)
        var found: [String: String] = [:]
        for line in String(decoding: out, as: UTF8.self).split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard parts.count == 2 else { continue }
            found[String(parts[1]).trimmedWhitespace] = parts[0].lowercased()
        }
        return found
    }

    /// Runs rclone with `args` (and the list of `names`, when given); its stdout, or why it failed.
    private func run(_ args: [String], names: [String]?, line: ((String) -> Void)? = nil) throws(Failure) -> [UInt8] {
        var argv = [setup.rclone, "--config", setup.rcloneConfig] + args
        var list: String?
        if let names {
            let path = PlainIO.path(scratch, "files-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).txt")
            let text = names.joined(separator: "\n") + "\n"
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                throw Failure(description: "cannot write the list of files \(path): \(String(cString: strerror(errno)))")
            }
            PlainIO.write(fd, text)
            close(fd)
            list = path
            argv += ["--files-from-raw", path]
        }
        defer { if let list { unlink(list) } }
        let outcome: ChildProcess.Outcome
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            outcome = try process.run(argv, environment: ["PATH=/usr/bin:/bin", "HOME=\(scratch)", "LANG=C.UTF-8"],
                                      line: line)
        } catch {
            throw Failure(description: error.description)
        }
        let took = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        Log("shutter.upload").debug("rclone \(args.first ?? "") (\(names?.count ?? 1) files): "
                                    + "\(outcome.succeeded ? "done" : "failed") in \((took * 1000).rounded() / 1000) s")
        if outcome.succeeded { return outcome.stdout }
        let notFound = outcome.status == 3 || outcome.status == 4
        let text = outcome.stderr.lowercased()
        let unreachable = ["failed to create file system", "couldn't connect", "connection refused", "i/o timeout",
                           "no such host", "network is unreachable", "no route to host"].contains { text.contains($0) }
        throw Failure(description: Self.reason(outcome, command: args.first ?? "rclone"), notFound: notFound,
                      unreachable: unreachable)
    }

    /// The line of rclone's errors that says what went wrong, without its date and level.
    static func reason(_ outcome: ChildProcess.Outcome, command: String) -> String {
        if let signal = outcome.signal { return "rclone \(command) was stopped (signal \(signal))" }
        let lines = outcome.stderr.split(whereSeparator: \.isNewline).map(String.init)
        let errorLine = lines.last { $0.contains("ERROR") || $0.contains("Failed to") || $0.contains("CRITICAL") } ?? lines.last
        return "rclone \(command) failed (exit status \(outcome.status ?? -1)): \(reason(errorLine ?? "no message"))"
    }

    /// A line of rclone's log without its date and level.
    static func reason(_ line: String) -> String {
        var text = line
        for marker in ["ERROR : ", "CRITICAL: ", "NOTICE: ", "Failed to "] {
            if let r = text.firstRange(of: marker) {
                text = marker == "Failed to " ? String(text[r.lowerBound...]) : String(text[r.upperBound...])
                break
            }
        }
        return String(text.prefix(400))
    }
}
