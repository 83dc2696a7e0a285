// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

/// One file's place in the upload queue, kept on the card beside DCIM (`.upload/1000001.json`
/// for 100SHUTR/SHTR0001), written atomically by the uploader alone (`UploadRecords.write`),
/// read by shutterd's low-space policy: a file is deleted for space only when its record
/// says `verified` and still names the file as it is on the card (`matches`).
public struct UploadRecord: Codable, Equatable, Sendable {
    public enum State: String, Codable, Sendable {
        /// Found and waiting its turn.
        case pending
        /// Being copied (a restart finds it here and begins again).
        case uploading
        /// The copy on the remote was checked: its size, and its hash where the remote has one.
        case verified
        /// The last try failed (`reason`); it is tried again at `nextTry`.
        case failed
    }

    /// "DCIM/100SHUTR/SHTR0001.JPG", below the storage root.
    public var file: String
    /// The file as it was queued: a record names the same file only while these hold.
    public var bytes: UInt64
    public var modified: Double
    public var state: State
    /// Where the copy is (or goes): "nas:camera/2026/12/05/SHTR0001.JPG".
    public var remote: String?
    /// How the copy was checked: "md5 <hex>", "sha1 <hex>", or "size" (the remote has no hash).
    public var check: String?
    public var attempts: Int
    public var reason: String?
    /// Wall-clock seconds since 1970.
    public var nextTry: Double?
    public var verifiedAt: Double?

    public init(file: String, bytes: UInt64, modified: Double, state: State = .pending) {
        self.file = file
        self.bytes = bytes
        self.modified = modified
        self.state = state
        self.attempts = 0
    }

    /// Whether the record speaks of `item` as it is now (same size and time).
    public func matches(_ item: MediaItem) -> Bool { bytes == item.bytes && modified == item.modified }
}

/// The queue's records on the card: `<root>/.upload/`. shutterd makes the folder when uploads
/// are on (it owns the card; the uploader's unit may write only there).
public enum UploadRecords {
    public static let folder = ".upload"

    public static func directory(root: String) -> String { PlainIO.path(root, folder) }

    public static func path(root: String, _ number: DCFNumber) -> String {
        PlainIO.path(directory(root: root), "\(number.webNumber).json")
    }

    /// Makes the folder (and the storage root, when it is not there yet): shutterd, at the
    /// start with uploads on; the uploader when it finds it gone.
    public static func prepare(root: String) throws(SystemError) {
        for dir in [root, directory(root: root)] where mkdir(dir, 0o770) != 0 && errno != EEXIST {
            throw SystemError(errno: errno, call: "mkdir", path: dir)
        }
    }

    /// The record of `number`, nil when there is none (or it cannot be read: begun again).
    public static func read(root: String, _ number: DCFNumber) -> UploadRecord? {
        guard let bytes = try? AtomicFile.read(path(root: root, number), limit: 64 << 10) else { return nil }
        return try? PlainJSON.decode(UploadRecord.self, from: bytes)
    }

    /// Replaces the record atomically (a temporary file renamed over it). `durable` (a
    /// verified copy: what deletion trusts) syncs the file and the folder first; the other
    /// states are not synced: one a power cut takes is only a file sent again.
    public static func write(_ record: UploadRecord, root: String, _ number: DCFNumber, durable: Bool,
                             sync: CardSync = CardSync()) throws {
        let bytes = try PlainJSON.encode(record)
        if access(directory(root: root), F_OK) != 0 { try prepare(root: root) }
        let final = path(root: root, number)
        if durable {
            try bytes.withUnsafeBytes { raw in try AtomicFile.write(to: final, placement: .replacing, sync: sync, bytes: raw) }
            return
        }
        let tmp = PlainIO.path(directory(root: root), ".\(number.webNumber).json.tmp-\(getpid())")
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

    /// Whether `item` has a verified copy (its record is verified and names it as it is).
    public static func isVerified(_ item: MediaItem, root: String) -> Bool {
        guard let r = read(root: root, item.number) else { return false }
        return r.state == .verified && r.matches(item)
    }
}
