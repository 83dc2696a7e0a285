// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

/// A durable queue's records on the card: one small JSON file per item in a folder of its
/// own beside DCIM (`.upload/` for the uploads, `.webhook/` for the webhook's events),
/// each replaced atomically (a temporary file renamed over it), so a kill, a restart or a
/// power cut leaves every record whole: the one before or the one after. shutterd makes the
/// folder (it owns the card); the part that keeps the queue writes in it.
public struct RecordFolder<Record: Codable & Sendable>: Sendable {
    public let root: String
    public let name: String

    public init(root: String, name: String) {
        self.root = root
        self.name = name
    }

    public var directory: String { PlainIO.path(root, name) }

    public func path(_ key: String) -> String { PlainIO.path(directory, "\(key).json") }

    /// Makes the folder (and the storage root, when it is not there yet).
    public func prepare() throws(SystemError) {
        for dir in [root, directory] where mkdir(dir, 0o770) != 0 && errno != EEXIST {
            throw SystemError(errno: errno, call: "mkdir", path: dir)
        }
    }

    /// The record `key`, nil when there is none (or it cannot be read).
    public func read(_ key: String) -> Record? {
        guard let bytes = try? AtomicFile.read(path(key), limit: 1 << 20) else { return nil }
        return try? PlainJSON.decode(Record.self, from: bytes)
    }

    /// The keys of every record, in no order.
    public func keys() -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var out: [String] = []
        while let e = readdir(dir) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".json"), !name.hasPrefix(".") { out.append(String(name.dropLast(5))) }
        }
        return out
    }

    /// Replaces the record atomically. `durable` syncs the file and the folder first (what
    /// another decision rests on: a verified copy that allows a deletion); otherwise it is
    /// not synced, and one a power cut takes is only work done again.
    public func write(_ record: Record, _ key: String, durable: Bool, sync: CardSync = CardSync()) throws {
        let bytes = try PlainJSON.encode(record)
        if access(directory, F_OK) != 0 { try prepare() }
        let final = path(key)
        if durable {
            try bytes.withUnsafeBytes { raw in try AtomicFile.write(to: final, placement: .replacing, sync: sync, bytes: raw) }
            return
        }
        let tmp = PlainIO.path(directory, ".\(key).json.tmp-\(getpid())")
        let fd = try typedEINTR("open", path: tmp) { open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o640) }
        do {
            try bytes.withUnsafeBytes { raw in try AtomicFile.writeAll(fd: fd, bytes: raw, path: tmp) }
        } catch {
            close(fd)
            unlink(tmp)
            throw error
        }
        close(fd)
        try typedEINTR("rename", path: final) { rename(tmp, final) }
    }

    /// Replaces several records durably with two syncs of the card in all, where `write`
    /// takes two each (43 records of a batch: 0.42 s of fsyncs, on a card more): the files
    /// written, the card's file system synced, renamed into place, the folder synced.
    public func writeDurably(_ records: [(Record, String)], sync: CardSync = CardSync()) throws {
        guard !records.isEmpty else { return }
        if access(directory, F_OK) != 0 { try prepare() }
        var written: [(String, String)] = []
        defer { for (tmp, _) in written { unlink(tmp) } }
        for (record, key) in records {
            let bytes = try PlainJSON.encode(record)
            let tmp = PlainIO.path(directory, ".\(key).json.tmp-\(getpid())")
            let fd = try typedEINTR("open", path: tmp) { open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o640) }
            written.append((tmp, path(key)))
            defer { close(fd) }
            try bytes.withUnsafeBytes { raw in try AtomicFile.writeAll(fd: fd, bytes: raw, path: tmp) }
        }
        let dir = try typedEINTR("open", path: directory) { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { close(dir) }
        try typedEINTR("syncfs", path: directory) { sync.syncfs(dir, path: directory) }
        while let (tmp, final) = written.first {
            try typedEINTR("rename", path: final) { rename(tmp, final) }
            written.removeFirst()
        }
        try typedEINTR("fsync", path: directory) { sync.fsync(dir, path: directory) }
    }

    /// Removes the record, durably (the folder synced): what is done is not done again.
    public func remove(_ key: String, sync: CardSync = CardSync()) throws {
        guard unlink(path(key)) == 0 || errno == ENOENT else {
            throw SystemError(errno: errno, call: "unlink", path: path(key))
        }
        try AtomicFile.fsyncDirectory(directory, sync: sync)
    }
}
