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
    /// The last failure was the file's own (not an unreachable remote): it goes alone next,
    /// so it cannot hold back others. nil (older records) is taken as true.
    public var alone: Bool?
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

/// The upload queue's records: `<root>/.upload/1000001.json` for 100SHUTR/SHTR0001 (a
/// `RecordFolder`). shutterd makes the folder when uploads are on (it owns the card; the
/// uploader's unit may write only there).
public enum UploadRecords {
    public static let folder = ".upload"

    public static func records(root: String) -> RecordFolder<UploadRecord> { RecordFolder(root: root, name: folder) }

    public static func directory(root: String) -> String { records(root: root).directory }

    public static func prepare(root: String) throws(SystemError) { try records(root: root).prepare() }

    /// The record of `number`, nil when there is none (or it cannot be read: begun again).
    public static func read(root: String, _ number: DCFNumber) -> UploadRecord? {
        records(root: root).read("\(number.webNumber)")
    }

    /// Replaces the record atomically; `durable` for a verified copy (what deletion trusts).
    public static func write(_ record: UploadRecord, root: String, _ number: DCFNumber, durable: Bool,
                             sync: CardSync = CardSync()) throws {
        try records(root: root).write(record, "\(number.webNumber)", durable: durable, sync: sync)
    }

    /// Replaces several records durably at once (a batch's verified copies).
    public static func writeDurably(_ records: [(UploadRecord, DCFNumber)], root: String, sync: CardSync = CardSync()) throws {
        try Self.records(root: root).writeDurably(records.map { ($0.0, "\($0.1.webNumber)") }, sync: sync)
    }

    /// Whether `item` has a verified copy (its record is verified and names it as it is).
    public static func isVerified(_ item: MediaItem, root: String) -> Bool {
        guard let r = read(root: root, item.number) else { return false }
        return r.state == .verified && r.matches(item)
    }
}
