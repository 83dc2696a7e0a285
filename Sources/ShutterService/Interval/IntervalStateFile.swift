// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ShutterCore
import ShutterStorage

/// What interval capture keeps on the card (`.interval/state.json`), so a restart goes on
/// with the count and does not take a slot again.
struct IntervalRecord: Codable, Sendable, Equatable {
    var taken = 0
    var skipped = 0
    var failed = 0
    var paused = false
    /// The last slot taken or skipped, in seconds on `lastSlotClock`'s timeline ("wall":
    /// local seconds since the epoch; "monotonic": seconds since boot).
    var lastSlot: Int64?
    var lastSlotClock: String?

    init() {}

    private enum CodingKeys: String, CodingKey { case taken, skipped, failed, paused, lastSlot, lastSlotClock }

    // By hand: a field an older or newer shutterd did not write is its default.
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        taken = try c.decodeIfPresent(Int.self, forKey: .taken) ?? 0
        skipped = try c.decodeIfPresent(Int.self, forKey: .skipped) ?? 0
        failed = try c.decodeIfPresent(Int.self, forKey: .failed) ?? 0
        paused = try c.decodeIfPresent(Bool.self, forKey: .paused) ?? false
        lastSlot = try c.decodeIfPresent(Int64.self, forKey: .lastSlot)
        lastSlotClock = try c.decodeIfPresent(String.self, forKey: .lastSlotClock)
    }
}

/// The record's reads and writes, on one queue in the order of the changes. Each write is
/// durable (file and folder synced, RecordFolder): a slot is recorded as taken when its
/// photo is asked for, so a power cut may lose that slot's photo but never takes it twice.
struct IntervalStateFile {
    static let queue = DispatchQueue(label: "shutter.interval")
    static let folder = ".interval"
    static let key = "state"

    let storage: Storage
    let jobs: Jobs

    var path: String { records.path(Self.key) }
    private var records: RecordFolder<IntervalRecord> { RecordFolder(root: storage.root, name: Self.folder) }

    /// Writes `record` as a job; `.intervalSaved` says how it went.
    func save(_ record: IntervalRecord) {
        let storage = self.storage, records = self.records
        jobs.run(on: Self.queue) {
            do {
                // Never onto the system disk under an unmounted card's mount point.
                if storage.requireMountPoint { _ = try storage.checkHealth() }
                try records.write(record, Self.key, durable: true, sync: storage.cardSync)
                return .intervalSaved(problem: nil)
            } catch {
                return .intervalSaved(problem: "\(error)")
            }
        }
    }

    /// Before the loop: the record, nil without one; `unreadable` when there is one that
    /// does not read (the count starts again, and the next write replaces it).
    func load() async -> (record: IntervalRecord?, unreadable: Bool) {
        let records = self.records, path = self.path
        return await Blocking.run(on: Self.queue) {
            let record = records.read(Self.key)
            return (record, record == nil && access(path, F_OK) == 0)
        }
    }
}
