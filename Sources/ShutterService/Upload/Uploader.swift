// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ShutterControl
import ShutterCore
import ShutterStorage
import Synchronization

/// The upload queue and its worker. The queue is the card itself: every finished photo and
/// clip (`upload.what`) without a verified copy is waiting, and its record on the card
/// (`UploadRecords`) says how far it got, so a kill, a restart or a power cut loses nothing.
/// `cycle()` is blocking (rclone runs to its end): it runs on the uploads' queue only.
///
/// One batch (files of one card folder going to one remote folder) goes:
/// copy to `<remote>/.shutter-incoming/` → list the copies with their hashes and hash the
/// card's files the same way → a copy that differs is deleted there, never moved on →
/// the others moved to their final names on the server (a name taken by another file gets
/// "-2", "-3", ...) → listed and compared again → `verified`. A final name only ever holds a
/// checked copy; a batch cut short leaves copies in the incoming folder only, and the next
/// try starts again.
final class Uploader: Sendable {
    struct Settings: Sendable {
        var what: ShutterConfig.Upload.What
        var layout: ShutterConfig.Upload.Layout
        var alertSeconds: Double
        /// Most files and bytes in one batch.
        var batchFiles = 50
        var batchBytes: UInt64 = 2 << 30
        /// A failed file's next try: 5 s doubling to this.
        var maxBackoffSeconds: Double = 30
    }

    /// What happened, for the live events ("uploaded", "upload-failed").
    enum Happening: Sendable, Equatable {
        case uploaded(file: String, remote: String, bytes: UInt64, check: String)
        case failed(file: String, reason: String, attempts: Int)
    }

    private struct State {
        var records: [DCFNumber: UploadRecord] = [:]
        var paused = false
        var current: UploadReport.Current?
        var lastError: String?
        var lastUploaded: String?
        var lastRemote: String?
        /// When an upload last worked (or the queue was last empty), wall seconds.
        var lastGood: Double?
        var happenings: [Happening] = []
        /// The copies verified last before the start were looked at again (`recheck`).
        var rechecked = false
        /// What the remote is (its hashes; a folder of this machine?), once asked.
        var remoteInfo: Rclone.Info?
    }

    /// Copies verified this long before the last one verified are looked at again after a
    /// start: a power cut can take what a server (or a disk on this machine) had not yet
    /// written, after its check here passed (the kernel writes dirty data within ~30 s).
    static let recheckSeconds: Double = 120

    private let setup: UploadSetup
    private let rclone: Rclone
    private let storage: Storage
    private let settings: Settings
    private let wallClock: any WallClock
    /// Told when the report changes during a cycle (a batch begins, progresses, ends).
    private let changed: @Sendable () -> Void
    private let state = Mutex(State())
    private let log = Log("shutter.upload")

    init(setup: UploadSetup, rclone: Rclone, storage: Storage, settings: Settings, wallClock: any WallClock,
         changed: @escaping @Sendable () -> Void = {}) {
        self.changed = changed
        self.setup = setup
        self.rclone = rclone
        self.storage = storage
        self.settings = settings
        self.wallClock = wallClock
    }

    private var root: String { storage.root }
    private var now: Double {
        let w = wallClock.now()
        return Double(w.secondsSinceEpoch) + Double(w.nanoseconds) / 1e9
    }

    // MARK: Commands (any thread)

    func pause() {
        state.withLock { $0.paused = true }
        rclone.daemon.pause()
    }

    /// Ends rclone for good (the service stops): a copy under way is sent again at the next start.
    func shutdown() {
        pause()
        rclone.daemon.shutdown()
    }

    func resume() {
        rclone.daemon.resume()
        state.withLock { $0.paused = false }
    }

    /// Every failed file is due now.
    func retry() {
        state.withLock { s in
            for (n, var r) in s.records where r.state == .failed {
                r.nextTry = nil
                s.records[n] = r
            }
        }
    }

    /// The events since the last call.
    func takeHappenings() -> [Happening] {
        state.withLock { s in
            defer { s.happenings.removeAll() }
            return s.happenings
        }
    }

    func report() -> UploadReport {
        let t = now
        return state.withLock { s in
            var r = UploadReport(remote: setup.remoteName + ":" + setup.remotePath)
            r.paused = s.paused
            var oldest: Double?
            for record in s.records.values {
                if record.state == .verified {
                    r.verifiedFiles += 1
                    continue
                }
                r.waitingFiles += 1
                r.waitingBytes += record.bytes
                if record.state == .failed { r.failedFiles += 1 }
                oldest = min(oldest ?? record.modified, record.modified)
            }
            r.oldestWaitingSeconds = oldest.map { max(0, t - $0) }
            r.current = s.current
            r.lastError = s.lastError
            r.lastUploaded = s.lastUploaded
            r.lastRemote = s.lastRemote
            r.failing = r.waitingFiles > 0 && s.lastError != nil && t - (s.lastGood ?? t) >= settings.alertSeconds
            return r
        }
    }

    // MARK: The work (the uploads' queue only)

    /// Finds new files, then copies one batch of those due. True when there may be more to do now.
    func cycle() -> Bool {
        scan()
        guard !state.withLock({ $0.paused }) else { return false }
        if !state.withLock({ $0.rechecked }) { guard recheck() else { return false } }
        let batch = nextBatch()
        guard !batch.isEmpty else {
            state.withLock { s in if !s.records.values.contains(where: { $0.state != .verified }) { s.lastGood = now } }
            return false
        }
        upload(batch)
        return true
    }

    /// Brings the records up to date with the card: new files get a pending record (their
    /// remote folder decided now, while the clock's word is current), gone ones are forgotten.
    private func scan() {
        let items = storage.finishedMedia().filter { item in
            switch settings.what {
            case .both: return true
            case .photos: return item.kind == .photo
            case .clips: return item.kind == .video
            }
        }
        let known = state.withLock { $0.records }
        var fresh: [DCFNumber: UploadRecord] = [:]
        for item in items {
            if let r = known[item.number], r.matches(item) {
                fresh[item.number] = r
                continue
            }
            if var r = UploadRecords.read(root: root, item.number), r.matches(item) {
                if r.state != .verified, !(r.remote ?? "").hasPrefix(setup.remote("")) {
                    r.remote = setup.remote(folder(for: item) + "/" + item.fileName)  // upload.remote changed since
                }
                fresh[item.number] = r.state == .uploading ? Self.restarted(r) : r
                continue
            }
            let file = "DCIM/\(item.number.directoryName)/\(item.fileName)"
            // Never the growing fragmented file, nor a clip a power cut left unfinished.
            if item.kind == .video && !MP4Shape.isFinishedRegular(path: PlainIO.path(root, file)) { continue }
            var r = UploadRecord(file: file, bytes: item.bytes, modified: item.modified)
            r.remote = setup.remote(folder(for: item) + "/" + item.fileName)
            do {
                try UploadRecords.write(r, root: root, item.number, durable: false, sync: storage.cardSync)
            } catch {
                note(error: "cannot write the upload record of \(file) in \(UploadRecords.directory(root: root)): \(error)")
                continue
            }
            fresh[item.number] = r
        }
        state.withLock { $0.records = fresh }
        forgetGone(keeping: Set(fresh.keys.map { "\($0.webNumber)" }))
    }

    /// Records of files no longer on the card (deleted by a person or a policy) are removed:
    /// a file that comes back under the number is another one, queued anew.
    private func forgetGone(keeping: Set<String>) {
        let records = UploadRecords.records(root: root)
        for key in records.keys() where !keeping.contains(key) {
            guard let r = records.read(key), access(PlainIO.path(root, r.file), F_OK) != 0 else { continue }
            unlink(records.path(key))
        }
    }

    /// A record a kill left `uploading`: begun again.
    private static func restarted(_ r: UploadRecord) -> UploadRecord {
        var r = r
        r.state = .pending
        return r
    }

    /// "2026/12/05" from the file's time when the clock is trusted (`date`), else its DCF folder.
    private func folder(for item: MediaItem) -> String {
        let wall = wallClock.now()
        guard settings.layout == .date, wall.isTrusted else { return item.number.directoryName }
        var t = time_t(item.modified) + time_t(wall.utcOffsetSeconds)
        var tm = tm()
        gmtime_r(&t, &tm)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(tm.tm_year + 1900)/\(two(tm.tm_mon + 1))/\(two(tm.tm_mday))"
    }

    private struct Item {
        let number: DCFNumber
        var record: UploadRecord
        var name: String { PlainIO.lastComponent(record.file) }
        var localFolder: String { PlainIO.deletingLastComponent(record.file) }
        var remoteFolder: String { PlainIO.deletingLastComponent(record.remote ?? "") }
    }

    /// The oldest due files of one card folder going to one remote folder.
    private func nextBatch() -> [Item] {
        let t = now
        let due = state.withLock { s in
            s.records.filter { $0.value.state != .verified && ($0.value.nextTry ?? 0) <= t }
                .map { Item(number: $0.key, record: $0.value) }
                .sorted { $0.number < $1.number }
        }
        guard let first = due.first else { return [] }
        // A file that failed by itself goes alone: one bad file (a read error, a size the remote
        // refuses) must not hold back the others it was sent with. Files that failed because
        // the remote was unreachable go together again.
        func alone(_ i: Item) -> Bool { i.record.state == .failed && i.record.alone != false }
        if alone(first) { return [first] }
        var batch: [Item] = []
        var bytes: UInt64 = 0
        for item in due where item.localFolder == first.localFolder && item.remoteFolder == first.remoteFolder && !alone(item) {
            if !batch.isEmpty && (batch.count >= settings.batchFiles || bytes + item.record.bytes > settings.batchBytes) { break }
            batch.append(item)
            bytes += item.record.bytes
        }
        return batch
    }

    private func upload(_ batch: [Item]) {
        var batch = batch
        for i in batch.indices {
            batch[i].record.state = .uploading
            batch[i].record.attempts += 1
            save(batch[i])
        }
        let localFolder = PlainIO.path(root, batch[0].localFolder)
        let finalFolder = batch[0].remoteFolder
        let incoming = setup.remote(".shutter-incoming")
        let bytes = batch.reduce(UInt64(0)) { $0 + $1.record.bytes }
        state.withLock { $0.current = UploadReport.Current(file: batch[0].record.file, files: batch.count, bytes: bytes) }
        changed()
        defer {
            state.withLock { $0.current = nil }
            changed()
        }
        let names = batch.map(\.name)
        // The batch's steps timed, for the log line that ends it (`make bench` reads it).
        var steps: [(String, UInt64)] = [("", DispatchTime.now().uptimeNanoseconds)]
        func mark(_ step: String) { steps.append((step, DispatchTime.now().uptimeNanoseconds)) }
        do throws(Rclone.Failure) {
            // The card's files hashed as the remote hashes, while they are copied.
            let asked = Self.hashType(try remoteInfo().hashes)
            let hashed = try rclone.copy(names, from: localFolder, to: incoming, hashing: asked) { progress in
                switch progress {
                case .sent(let fraction): self.state.withLock { $0.current?.sentBytes = UInt64(Double(bytes) * fraction) }
                case .error(let why):
                    let advice = Self.advice(for: why, remote: self.setup.remoteName).map { "; \($0)" } ?? ""
                    self.note(error: "rclone cannot copy to the remote \"\(self.setup.remoteName)\" now (\(why)\(advice)); the "
                              + "files wait on the card and are sent again")
                }
                self.changed()
            }
            mark("copy")
            // The copies as the remote has them.
            let staged = try rclone.list(names, in: incoming, hash: asked)
            // What the remote gave: an SFTP server without md5sum gives none (then by size).
            let kind = asked.flatMap { a in staged.values.contains { $0.hashes[a] != nil } ? a : nil }
            let local = kind == nil ? [:] : hashed
            var good: [Item] = []
            for item in batch {
                if let problem = Self.differs(staged[item.name], item.record, kind: kind, localHash: local[item.name]) {
                    try? rclone.deleteFile(incoming + "/" + item.name)
                    fail(item, "the copy in \(incoming) \(problem); it was deleted there and is sent again")
                } else {
                    good.append(item)
                }
            }
            guard !good.isEmpty else { return }
            mark("check")
            // On a folder of this machine the checked copies reach the disk before they are moved:
            // a cut after the move then finds a final name over whole data, or no final name.
            try syncIfLocal(good.map(\.name), in: incoming)
            // Names already taken on the remote: the same file (a try cut short after its move) or another one.
            let there = try rclone.list(good.map(\.name), in: finalFolder, hash: kind)
            var plain: [Item] = []
            for var item in good {
                guard let taken = there[item.name] else { plain.append(item); continue }
                // Ours already (a try cut short after its move) only on a hash both sides have:
                // DCF names repeat (each card folder counts from 1), and a size alone proves nothing.
                if Self.sameByHash(taken, kind: kind, localHash: local[item.name]),
                   Self.differs(taken, item.record, kind: kind, localHash: local[item.name]) == nil {
                    try? rclone.deleteFile(incoming + "/" + item.name)
                    plain.append(item)  // verified below, as it is
                    continue
                }
                let renamed = try freeName(for: item.name, in: finalFolder)
                try rclone.moveTo(incoming + "/" + item.name, finalFolder + "/" + renamed)
                try syncIfLocal([renamed], in: finalFolder)
                item.record.remote = finalFolder + "/" + renamed
                try verify([item], in: finalFolder, kind: kind, local: [renamed: local[item.name] ?? ""])
            }
            let moving = plain.filter { there[$0.name] == nil }.map(\.name)
            if !moving.isEmpty { try rclone.move(moving, from: incoming, to: finalFolder) }
            try syncIfLocal(plain.map(\.name), in: finalFolder)
            mark("move")
            try verify(plain, in: finalFolder, kind: kind, local: local)
            mark("final check and records")
            let took = zip(steps.dropFirst(), steps).map { "\($0.0) \(Self.seconds($0.1 - $1.1))" }
            log.info("batch of \(batch.count) files (\(bytes) bytes) done in \(Self.seconds(steps.last!.1 - steps[0].1)) s: "
                     + took.joined(separator: ", "))
        } catch {
            let paused = state.withLock { $0.paused }
            for item in batch where state.withLock({ $0.records[item.number]?.state == .uploading }) {
                if paused {
                    // Stopped by `upload pause`: sent again on resume, not a failed try.
                    var r = item.record
                    r.state = .pending
                    r.attempts = max(0, r.attempts - 1)
                    save(Item(number: item.number, record: r))
                } else {
                    fail(item, "\(error)", alone: !error.unreachable)
                }
            }
        }
    }

    /// On a remote that is a folder of this machine, the moved files and their folder are
    /// written to the disk before they are called verified (`Rclone.syncLocal`).
    private func syncIfLocal(_ names: [String], in remoteFolder: String) throws(Rclone.Failure) {
        guard !names.isEmpty else { return }
        guard let root = try remoteInfo().localRoot else { return }
        let base = setup.remote("")
        let rest = remoteFolder.hasPrefix(base) ? String(remoteFolder.dropFirst(base.count)) : ""
        let folder = rest.isEmpty ? root : PlainIO.path(root, rest)
        try Rclone.syncLocal(names, in: folder)
        log.debug("\(names.count) copies in \(folder) written to the disk (a remote on this machine)")
    }

    /// What the remote is, asked once.
    private func remoteInfo() throws(Rclone.Failure) -> Rclone.Info {
        if let known = state.withLock({ $0.remoteInfo }) { return known }
        let info = try rclone.info(of: setup.remote(""))
        state.withLock { $0.remoteInfo = info }
        return info
    }

    /// After a start, the copies verified last before it are listed again and compared with
    /// what their records say was checked (size and hash); one that is no longer whole (a
    /// power cut took what the remote had not written) is sent again. False while the
    /// remote cannot be asked: nothing is uploaded, and it is asked again next cycle.
    private func recheck() -> Bool {
        // Asked now, once: rclone's daemon starts and reaches the remote before the first batch.
        _ = try? remoteInfo()
        let verified = state.withLock { s in s.records.filter { $0.value.state == .verified } }
        let newest = verified.values.compactMap(\.verifiedAt).max() ?? 0
        let recent = verified.filter { ($0.value.verifiedAt ?? 0) >= newest - Self.recheckSeconds }
            .map { Item(number: $0.key, record: $0.value) }
        var bad = 0
        for folder in Set(recent.map(\.remoteFolder)).sorted() {
            let items = recent.filter { $0.remoteFolder == folder }
            let listed: [String: Rclone.Listed]
            do {
                let hash = items.compactMap { $0.record.check?.split(separator: " ").first.map(String.init) }.first { $0 != "size" }
                listed = try rclone.list(items.map { PlainIO.lastComponent($0.record.remote ?? $0.name) }, in: folder, hash: hash)
            } catch {
                note(error: "cannot look again at the copies in \(folder) after the start: \(error); uploads wait until it answers")
                return false
            }
            for item in items {
                let name = PlainIO.lastComponent(item.record.remote ?? item.name)
                // Against what the record says was checked ("md5 <hex>", or "size").
                let check = (item.record.check ?? "size").split(separator: " ").map(String.init)
                guard let problem = Self.differs(listed[name], item.record, kind: check.count == 2 ? check[0] : nil,
                                                 localHash: check.count == 2 ? check[1] : nil) else { continue }
                // Our own copy, cut short: away, so that the one sent again takes its name. A
                // larger file there is not a cut-short copy of ours: it stays (ours goes to "-2").
                if let there = listed[name], there.size <= item.record.bytes {
                    do {
                        try rclone.deleteFile(folder + "/" + name)
                    } catch {
                        note(error: "cannot delete the broken copy \(folder)/\(name): \(error); uploads wait until it can")
                        return false
                    }
                }
                bad += 1
                var r = item.record
                r.state = .pending
                r.verifiedAt = nil
                r.check = nil
                r.reason = "the copy \(folder)/\(name) \(problem) when looked at again after a restart"
                save(Item(number: item.number, record: r))
                log.warning("\(r.file): \(r.reason!) (a power cut took what the remote had not written); it is sent again")
                state.withLock { $0.happenings.append(.failed(file: r.file, reason: r.reason!, attempts: r.attempts)) }
            }
        }
        if !recent.isEmpty {
            log.info("looked again at the \(recent.count) copies verified last before the start: "
                     + (bad == 0 ? "all whole" : "\(bad) not whole, sent again"))
        }
        state.withLock { $0.rechecked = true }
        return true
    }

    /// Lists the final copies and marks each verified, or failed: by size and hash, or by
    /// size alone after a rename on a remote whose hashes read the file back (`rehashAfterMove`).
    private func verify(_ items: [Item], in folder: String, kind: String?, local: [String: String]) throws(Rclone.Failure) {
        guard !items.isEmpty else { return }
        let names = items.map { PlainIO.lastComponent($0.record.remote ?? $0.name) }
        let rehash = try remoteInfo().rehashAfterMove
        let final = try rclone.list(names, in: folder, hash: rehash ? kind : nil)
        var verified: [Item] = []
        for (item, name) in zip(items, names) {
            if let problem = Self.differs(final[name], item.record, kind: rehash ? kind : nil, localHash: rehash ? local[name] : nil) {
                fail(item, "the copy \(folder)/\(name) \(problem)")
                continue
            }
            var r = item.record
            r.state = .verified
            r.remote = folder + "/" + name
            // The hash the copy was checked by (here, or in `.shutter-incoming` before a rename).
            r.check = kind.flatMap { k in local[name].flatMap { $0.isEmpty ? nil : "\(k) \($0)" } } ?? "size"
            r.reason = nil
            r.nextTry = nil
            r.verifiedAt = now
            verified.append(Item(number: item.number, record: r))
        }
        // What deletion trusts: on the card before anyone is told.
        let began = DispatchTime.now().uptimeNanoseconds
        do {
            try UploadRecords.writeDurably(verified.map { ($0.record, $0.number) }, root: root, sync: storage.cardSync)
        } catch {
            for item in verified { fail(item, "its copy was verified, but its record could not be written on the card: \(error)") }
            return
        }
        log.debug("\(verified.count) records written in \(Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9) s")
        for item in verified {
            let r = item.record
            state.withLock { s in
                s.records[item.number] = r
                s.lastError = nil
                s.lastGood = now
                s.lastUploaded = r.file
                s.lastRemote = r.remote
                s.happenings.append(.uploaded(file: r.file, remote: r.remote!, bytes: r.bytes, check: r.check!))
            }
            log.info("uploaded \(r.file) to \(r.remote!) (\(r.check!))")
        }
    }

    /// Nanoseconds as seconds with three decimals.
    static func seconds(_ nanoseconds: UInt64) -> String {
        let ms = (nanoseconds + 500_000) / 1_000_000, rest = String(ms % 1000)
        return "\(ms / 1000)." + String(repeating: "0", count: 3 - rest.count) + rest
    }

    /// "SHTR0001-2.JPG", the first such name not taken in `folder`.
    private func freeName(for name: String, in folder: String) throws(Rclone.Failure) -> String {
        let ext = PlainIO.pathExtension(name)
        let stem = String(name.dropLast(ext.isEmpty ? 0 : ext.count + 1))
        let candidates = (2...50).map { "\(stem)-\($0)" + (ext.isEmpty ? "" : ".\(ext)") }
        let taken = try rclone.list(candidates, in: folder, hash: nil)
        guard let free = candidates.first(where: { taken[$0] == nil }) else {
            throw Rclone.Failure(description: "\(folder) already has \(name) and 49 other files of that name")
        }
        return free
    }

    /// The hash both sides can give, best first; nil when the remote has none (size only).
    static func hashType(_ remote: [String]) -> String? {
        ["md5", "sha1", "sha256"].first { remote.contains($0) }
    }

    /// Whether the remote file and the card's have the same hash (both known).
    static func sameByHash(_ copy: Rclone.Listed, kind: String?, localHash: String?) -> Bool {
        guard let kind, let theirs = copy.hashes[kind], let ours = localHash, !ours.isEmpty else { return false }
        return theirs == ours
    }

    /// Why a listed copy is not the card's file, or nil when it is.
    static func differs(_ copy: Rclone.Listed?, _ record: UploadRecord, kind: String?, localHash: String?) -> String? {
        guard let copy else { return "is not there" }
        if copy.size != record.bytes { return "has \(copy.size) bytes, the card's file \(record.bytes)" }
        if let kind, let theirs = copy.hashes[kind] {
            guard let ours = localHash, !ours.isEmpty else { return "could not be compared (no \(kind) of the card's file)" }
            if theirs != ours { return "has \(kind) \(theirs), the card's file \(ours)" }
        }
        return nil
    }

    private func fail(_ item: Item, _ reason: String, alone: Bool = true) {
        var r = state.withLock { $0.records[item.number] } ?? item.record
        r.state = .failed
        r.reason = reason
        r.alone = alone
        let wait = min(settings.maxBackoffSeconds, 5 * Double(1 << min(10, max(0, r.attempts - 1))))
        r.nextTry = now + wait
        save(Item(number: item.number, record: r))
        let advice = Self.advice(for: reason, remote: setup.remoteName).map { " (\($0))" } ?? ""
        note(error: "\(r.file) not uploaded to the remote \"\(setup.remoteName)\": \(reason)\(advice); trying again in \(Int(wait)) s")
        state.withLock { $0.happenings.append(.failed(file: r.file, reason: reason, attempts: r.attempts)) }
    }

    /// What the user can do about a refusal rclone reported, when its words say which.
    static func advice(for reason: String, remote: String) -> String? {
        let r = reason.lowercased()
        // Words, not bare status numbers: a reason names files ("SHTR0401.JPG") and byte counts.
        if r.contains("unable to authenticate") || r.contains("unauthorized") || r.contains("forbidden") || r.contains("accessdenied")
            || r.contains("invalidaccesskeyid") || r.contains("signaturedoesnotmatch") {
            return "the server refused the login: check the user, password or keys of [\(remote)] in upload.rcloneConfig"
        }
        if r.contains("read only file system") || r.contains("read-only") || r.contains("permission denied") {
            return "the server does not let this user write there: check its permissions or pick another upload.remote"
        }
        if r.contains("disk space") || r.contains("no space left") || r.contains("quota") || r.contains("insufficient storage") {
            return "the remote is full: make room there; the files wait on the card until then"
        }
        return nil
    }

    private func note(error: String) {
        let said = state.withLock { s -> Bool in
            defer { s.lastError = error }
            return s.lastError == error
        }
        if !said { log.warning(error) }
    }

    /// The record, on the card and in memory.
    private func save(_ item: Item) {
        do {
            try UploadRecords.write(item.record, root: root, item.number, durable: item.record.state == .verified,
                                    sync: storage.cardSync)
        } catch {
            note(error: "cannot write the upload record of \(item.record.file): \(error)")
        }
        state.withLock { $0.records[item.number] = item.record }
    }
}
