// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore
import Synchronization

/// A file name handed out by `Storage.reserve`; its number is never handed
/// out again, whether or not the capture is finished.
public struct ReservedName: Equatable, Sendable {
    public var kind: Storage.MediaKind
    public var number: DCFNumber
    /// Absolute or root-relative path of the final file ("…/DCIM/100SHUTR/SHTR0001.JPG").
    public var path: String
    /// The directory holding it ("…/DCIM/100SHUTR").
    public var directory: String
}

/// Where photos and videos go: the DCF layout under `root`
/// (`DCIM/100SHUTR/SHTR0001.JPG`, `SHTR0002.MP4`), one number sequence that
/// never repeats (see `MediaCounter`), placement that never overwrites, and
/// the free-space policy checked before each capture.
///
/// Every method blocks on the file system (fsync): call them from a storage
/// queue or thread, not from the Swift task pool.
public final class Storage: Sendable {
    public enum MediaKind: String, Sendable {
        case photo, video
        public var fileExtension: String { self == .photo ? "JPG" : "MP4" }
    }

    public typealias LowSpacePolicy = ShutterConfig.Storage.LowSpacePolicy

    public let root: String
    public let dcim: String
    public let lowSpacePolicy: LowSpacePolicy
    /// Kept free besides a capture's own budget.
    public let minFreeBytes: UInt64
    public let budget: CaptureBudget
    public let requireMountPoint: Bool
    /// How the card's files and folders are synced: every fsync of this storage's, and of
    /// the service's other files on the card (clips, the settings file), goes through it.
    public let cardSync: CardSync

    private struct State {
        /// The next ordinal to try; nil until the first reservation scans the card.
        var next: Int?
        /// Videos being recorded (ordinals): never deleted to make room.
        var active: Set<Int> = []
    }

    /// Serializes reservations within this process (a `flock` on DCIM/ does it
    /// between processes) and guards the active-video set.
    private let state = Mutex(State())
    /// Told the paths a policy deleted, and why (on the thread that deleted them).
    private let deletions = Mutex<(@Sendable ([String], String) -> Void)?>(nil)

    /// `body` is told every time a policy deletes files: the low-space policy making room,
    /// `upload.keepDays` (the service tells watchers, as for a deletion by request).
    public func onPolicyDeletion(_ body: @escaping @Sendable (_ paths: [String], _ why: String) -> Void) {
        deletions.withLock { $0 = body }
    }

    /// `upload.keepDays`: deletes the files whose copy was verified before `cutoff` (wall
    /// seconds), never one being written or without a verified copy that still names it.
    @discardableResult
    public func deleteUploaded(verifiedBefore cutoff: Double) -> [String] {
        var deleted: [String] = []
        for item in finishedMedia() {
            guard let r = UploadRecords.read(root: root, item.number), r.state == .verified, r.matches(item),
                  let at = r.verifiedAt, at < cutoff else { continue }
            let path = PlainIO.path(PlainIO.path(dcim, item.number.directoryName), item.fileName)
            guard unlink(path) == 0 else { continue }
            unlinkPoster(of: path)
            deleted.append(path)
        }
        for folder in Set(deleted.map(PlainIO.deletingLastComponent)) { try? fsyncDirectory(folder) }
        if !deleted.isEmpty { deletions.withLock { $0 }?(deleted, "upload.keepDays: its copy was verified over that long ago") }
        return deleted
    }

    /// Uploads are on: the low-space policy deletes only files with a verified copy.
    public let uploadsOn: Bool

    public init(root: String, lowSpacePolicy: LowSpacePolicy = .refuse, minFreeBytes: UInt64 = 0,
                budget: CaptureBudget, requireMountPoint: Bool = false, uploadsOn: Bool = false,
                cardSync: CardSync = CardSync()) {
        self.uploadsOn = uploadsOn
        self.root = root
        self.dcim = PlainIO.path(root, "DCIM")
        self.lowSpacePolicy = lowSpacePolicy
        self.minFreeBytes = minFreeBytes
        self.budget = budget
        self.requireMountPoint = requireMountPoint
        self.cardSync = cardSync
    }

    public convenience init(config: ShutterConfig, cardSync: CardSync = CardSync()) {
        self.init(root: config.storage.root, lowSpacePolicy: config.storage.lowSpacePolicy,
                  minFreeBytes: UInt64(config.storage.minFreeMB) * 1_048_576,
                  budget: CaptureBudget(config: config), requireMountPoint: config.storage.requireMountPoint,
                  uploadsOn: config.upload.enabled, cardSync: cardSync)
    }

    // MARK: Health and space

    /// Checks that the root is there (and mounted, if required) and writable;
    /// returns its free space. For READY=1, the watchdog and before captures.
    @discardableResult
    public func checkHealth() throws(StorageError) -> FileSystemSpace {
        var st = stat()
        if stat(root, &st) != 0 {
            let e = SystemError(errno: errno, call: "stat", path: root)
            if e.errno == ENOENT || e.errno == ENOTDIR {
                throw StorageError(.missing, "the storage root \(root) does not exist: insert and mount the card, "
                                    + "or set storage.root", errno: e.errno)
            }
            throw StorageError(e)
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else {
            throw StorageError(.missing, "the storage root \(root) is not a directory; set storage.root")
        }
        if requireMountPoint, !(try sys { () throws(SystemError) in try FileSystemSpace.isMountPoint(root) }) {
            throw StorageError(.missing, "nothing is mounted on \(root) (storage.requireMountPoint is set): "
                                + "insert and mount the card")
        }
        let space = try sys { () throws(SystemError) in try FileSystemSpace.of(root) }
        if space.readOnly {
            throw StorageError(.readOnly, "\(root) is mounted read-only: check the card's lock switch and remount "
                                + "it read-write", errno: EROFS)
        }
        for path in [root, dcim] where access(path, F_OK) == 0 && access(path, W_OK) != 0 {
            throw StorageError(SystemError(errno: errno, call: "access", path: path))
        }
        return space
    }

    /// Makes sure a capture of `kind` fits: its budget plus `minFreeBytes`.
    /// With `.deleteOldestVideos`, deletes the lowest-numbered videos (never a
    /// photo, never one being recorded) until it fits; returns their paths.
    /// Throws `.full` when it cannot fit (message: needed and free space).
    @discardableResult
    public func ensureSpace(for kind: MediaKind) throws(StorageError) -> [String] {
        var space = try checkHealth()
        let need = budget.bytes(for: kind) + minFreeBytes
        if space.availableBytes >= need { return [] }
        let what = "a \(kind.rawValue) needs \(StorageError.megabytes(budget.bytes(for: kind)))"
            + (minFreeBytes > 0 ? " plus \(StorageError.megabytes(minFreeBytes)) kept free (storage.minFreeMB)" : "")
        guard lowSpacePolicy != .refuse else {
            throw StorageError(.full, "\(what) but only \(StorageError.megabytes(space.availableBytes)) is free on "
                                + "\(root): copy files off the card, or set storage.lowSpacePolicy to "
                                + (uploadsOn ? "\"delete-uploaded\"" : "\"delete-oldest-videos\""))
        }
        var deleted: [String] = []
        let why = "to make room (storage.lowSpacePolicy \(lowSpacePolicy.rawValue)\(uploadsOn ? ", a verified copy on the remote" : ""))"
        defer { if !deleted.isEmpty { deletions.withLock { $0 }?(deleted, why) } }
        for video in deletableOldestFirst() {
            guard unlink(video.path) == 0 || errno == ENOENT else {
                throw StorageError(SystemError(errno: errno, call: "unlink", path: video.path))
            }
            unlinkPoster(of: video.path)
            try sys { () throws(SystemError) in try fsyncDirectory(PlainIO.deletingLastComponent(video.path)) }
            deleted.append(video.path)
            space = try sys { () throws(SystemError) in try FileSystemSpace.of(root) }
            if space.availableBytes >= need { return deleted }
        }
        let free = StorageError.megabytes(space.availableBytes)
        if uploadsOn {
            let kinds = lowSpacePolicy == .deleteUploaded ? "files" : "videos"
            throw StorageError(.full, "\(what) but only \(free) is free on \(root) after deleting \(deleted.count) "
                                + "uploaded \(kinds); no other \(kinds) on the card have a verified copy yet, and one without "
                                + "is never deleted (`shutterctl upload status` shows what waits)")
        }
        if lowSpacePolicy == .deleteUploaded {
            throw StorageError(.full, "\(what) but only \(free) is free on \(root): storage.lowSpacePolicy "
                                + "\"delete-uploaded\" deletes only files with a verified copy, and uploads are off "
                                + "(upload.enabled)")
        }
        throw StorageError(.full, "\(what) but only \(free) is free on \(root) "
                            + "after deleting \(deleted.count) old video(s); photos are never deleted: copy them off the card")
    }

    /// Makes sure a clip's finish fits: a copy of `bytes` plus `minFreeBytes` (the copy
    /// replaces the clip once written, so this is the peak). Deletes nothing.
    /// Throws `.full` with what is needed and what is free.
    public func ensureRoom(toFinish bytes: UInt64) throws(StorageError) {
        let space = try checkHealth()
        let need = bytes + minFreeBytes
        guard space.availableBytes < need else { return }
        throw StorageError(.full, "finishing it needs \(StorageError.megabytes(bytes))"
                            + (minFreeBytes > 0 ? " plus \(StorageError.megabytes(minFreeBytes)) kept free (storage.minFreeMB)" : "")
                            + " but only \(StorageError.megabytes(space.availableBytes)) is free on \(root)")
    }

    /// True while `number` is a video being recorded (never deleted, never listed as finished).
    public func isBeingWritten(_ number: DCFNumber) -> Bool {
        state.withLock { $0.active.contains(number.ordinal) }
    }

    /// Finished videos (not being recorded), lowest number first. The number,
    /// not the file time, says which is oldest: the wall clock may have jumped.
    /// A clip's poster frame (`SHTR0002.THM` beside `SHTR0002.MP4`) goes with it.
    private func unlinkPoster(of path: String) {
        guard PlainIO.pathExtension(path).uppercased() == "MP4" else { return }
        unlink(String(path.dropLast(3)) + "THM")
    }

    /// What the low-space policy may delete, in its order. With uploads on, only files whose
    /// copy is verified (their record on the card says so and still names them): videos
    /// first, then photos (`delete-uploaded` only), each oldest first.
    func deletableOldestFirst() -> [(number: DCFNumber, path: String)] {
        guard uploadsOn else { return lowSpacePolicy == .deleteOldestVideos ? finishedVideosOldestFirst() : [] }
        let verified = finishedMedia().filter { UploadRecords.isVerified($0, root: root) }
        let kinds: [MediaKind] = lowSpacePolicy == .deleteUploaded ? [.video, .photo] : [.video]
        return kinds.flatMap { kind in
            verified.filter { $0.kind == kind }.sorted { $0.number < $1.number }
                .map { ($0.number, PlainIO.path(PlainIO.path(dcim, $0.number.directoryName), $0.fileName)) }
        }
    }

    func finishedVideosOldestFirst() -> [(number: DCFNumber, path: String)] {
        let active = state.withLock { $0.active }
        let fm = FileManager.default
        var out: [(number: DCFNumber, path: String)] = []
        for dirName in (try? fm.contentsOfDirectory(atPath: dcim)) ?? [] {
            guard let d = DCFNumber.directoryNumber(dirName) else { continue }
            let dir = PlainIO.path(dcim, dirName)
            for name in (try? fm.contentsOfDirectory(atPath: dir)) ?? [] {
                guard let (f, ext) = DCFNumber.fileNumber(name), ext == "MP4",
                      let n = DCFNumber(directory: d, file: f), !active.contains(n.ordinal) else { continue }
                out.append((n, PlainIO.path(dir, name)))
            }
        }
        return out.sorted { $0.number < $1.number }
    }

    // MARK: Names

    /// Hands out the next file name. The counter is durably advanced first. A
    /// `.video` name is created at once, empty, with O_EXCL (the recorder then
    /// opens and writes it; call `finishVideo` or `abandonVideo`). A `.photo`
    /// name is only reserved: write it with `savePhoto`, which places it exclusively.
    public func reserve(_ kind: MediaKind) throws(StorageError) -> ReservedName {
        try checkHealth()
        return try state.withLock { (s) throws(StorageError) -> ReservedName in
            try reserveLocked(kind, &s)
        }
    }

    private func reserveLocked(_ kind: MediaKind, _ s: inout State) throws(StorageError) -> ReservedName {
        try sys { () throws(SystemError) in try makeDirectory(dcim, parent: root) }
        // Between processes (a second daemon, a tool): an advisory lock on DCIM/.
        let lockFD = try sys { () throws(SystemError) in
            try typedEINTR("open", path: dcim) { open(dcim, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        }
        defer { close(lockFD) }
        try sys { () throws(SystemError) in try typedEINTR("flock", path: dcim) { flock(lockFD, LOCK_EX) } }

        if s.next == nil { s.next = highestExistingOrdinal(cleanUp: true) + 1 }
        for _ in 0..<4 {
            let stored = try sys { () throws(SystemError) in try MediaCounter.read(root: root) } ?? 0
            let ordinal = max(s.next ?? 0, stored)
            guard let number = DCFNumber(ordinal: ordinal) else {
                throw StorageError(.full, "every file number up to 999SHUTR/SHTR9999 has been used on \(root): "
                                    + "copy the files off, then delete DCIM/ and \(MediaCounter.fileName)")
            }
            // Write-ahead: the next number is durable before this one is used.
            try sys { () throws(SystemError) in try MediaCounter.write(next: ordinal + 1, root: root, sync: cardSync) }
            s.next = ordinal + 1
            let dir = PlainIO.path(dcim, number.directoryName)
            try sys { () throws(SystemError) in try makeDirectory(dir, parent: dcim) }
            let path = PlainIO.path(dir, number.fileName(extension: kind.fileExtension))
            if numberTaken(number, in: dir) {
                // The counter was behind the card (restored backup, another tool): skip past what is there.
                s.next = max(s.next ?? 0, highestExistingOrdinal(cleanUp: false) + 1)
                continue
            }
            if kind == .video {
                let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
                if fd < 0 {
                    let e = SystemError(errno: errno, call: "open", path: path)
                    if e.errno == EEXIST { continue }
                    throw StorageError(e)
                }
                close(fd)
                s.active.insert(ordinal)
            }
            return ReservedName(kind: kind, number: number, path: path, directory: dir)
        }
        throw StorageError(.ioError, "no free file name found in \(dcim) after 4 tries: another program is "
                            + "writing there; stop it")
    }

    /// Writes a photo (`write` gets the fd of a temp file) and places it under
    /// the next free name: temp, fsync, exclusive rename, directory fsync. The
    /// photo is whole or absent and never replaces a file; if its name was
    /// taken meanwhile, it takes the next number (`write` is called again).
    /// Errors of the file system come as `StorageError`, others from `write` as they are.
    public func savePhoto(_ write: (Int32) throws -> Void) throws -> ReservedName {
        for _ in 0..<4 {
            let name = try reserve(.photo)
            do {
                try AtomicFile.write(to: name.path, sync: cardSync, write)
                return name
            } catch let e as SystemError where e.errno == EEXIST {
                continue
            } catch let e as SystemError {
                throw StorageError(e)
            }
        }
        throw StorageError(.ioError, "every photo name tried in \(dcim) was taken while writing: another program "
                            + "is writing there; stop it")
    }

    /// `savePhoto` for bytes already in memory (an encoded JPEG).
    public func savePhoto(bytes: [UInt8]) throws(StorageError) -> ReservedName {
        do {
            return try savePhoto { fd in
                try bytes.withUnsafeBytes { try AtomicFile.writeAll(fd: fd, bytes: $0) }
            }
        } catch let e as StorageError {
            throw e
        } catch let e as SystemError {
            throw StorageError(e)
        } catch {
            throw StorageError(.ioError, "\(error)")
        }
    }

    /// The recorder is done with a video: makes it durable (fsync file and
    /// directory) and lets the low-space policy consider it.
    public func finishVideo(_ name: ReservedName) throws(StorageError) {
        defer { _ = state.withLock { $0.active.remove(name.number.ordinal) } }
        try sys { () throws(SystemError) in
            let fd = try typedEINTR("open", path: name.path) { open(name.path, O_RDONLY | O_CLOEXEC) }
            defer { close(fd) }
            try typedEINTR("fsync", path: name.path) { cardSync.fsync(fd, path: name.path) }
            try fsyncDirectory(name.directory)
        }
    }

    /// The recording never started: removes the empty placeholder. The number
    /// stays used.
    public func abandonVideo(_ name: ReservedName) {
        var st = stat()
        if lstat(name.path, &st) == 0, st.st_size == 0 { unlink(name.path) }
        _ = state.withLock { $0.active.remove(name.number.ordinal) }
    }

    // MARK: Helpers

    private func highestExistingOrdinal(cleanUp: Bool) -> Int {
        MediaCounter.highestExisting(dcim: dcim, cleanUp: cleanUp)?.ordinal ?? -1
    }

    /// A number is taken when a photo or a video of that number exists.
    private func numberTaken(_ number: DCFNumber, in dir: String) -> Bool {
        var st = stat()
        return ["JPG", "MP4"].contains { lstat(PlainIO.path(dir, number.fileName(extension: $0)), &st) == 0 }
    }

    private func makeDirectory(_ path: String, parent: String) throws(SystemError) {
        if mkdir(path, 0o755) == 0 {
            try fsyncDirectory(parent)
        } else if errno != EEXIST {
            throw SystemError(errno: errno, call: "mkdir", path: path)
        }
    }

    private func fsyncDirectory(_ dir: String) throws(SystemError) {
        try AtomicFile.fsyncDirectory(dir, sync: cardSync)
    }

    @discardableResult
    private func sys<T>(_ body: () throws(SystemError) -> T) throws(StorageError) -> T {
        do {
            return try body()
        } catch {
            throw StorageError(error)
        }
    }
}
