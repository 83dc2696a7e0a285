// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterStorage

/// Names the files of one clip. A clip starts speculatively at the press (the
/// press may still turn out to be a tap), so its first file is written under a
/// hidden temporary name in the storage root; when the press becomes a hold the
/// file is renamed onto its reserved DCF name (same filesystem, the recorder's
/// descriptor stays valid). Later segments get DCF names directly. Every DCF
/// name is a `VideoReservation`, finished when the clip is (`finish`).
/// The lock guards every mutable field; `open` runs on the encoder thread.
final class ClipFiles: @unchecked Sendable {
    private let lock = PlainLock()
    private let storage: Storage
    private let tempPath: String
    private var committed = false
    private var firstCreated = false
    private var renamedFirst: String?
    private var reservations: [VideoReservation] = []

    init(storage: Storage, serial: Int) {
        self.storage = storage
        tempPath = PlainIO.path(storage.root, ".shutter-pending-\(getpid())-\(serial).mp4")
    }

    /// Removes temporary clips a crash or power cut left behind (a press that
    /// never became a hold: nothing a person asked to keep).
    static func removeLeftovers(in root: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: root) else { return }
        for n in names where n.hasPrefix(".shutter-pending-") {
            unlink(PlainIO.path(root, n))
        }
    }

    /// The recorder's namer for each new file: names it and creates it (`create`) under
    /// the lock, so `commit` (on the recorder's queue) renames the first file only once it
    /// exists. A first file whose creation failed is not renamed: the next is named as if
    /// none had been made.
    func open(_ create: (String) throws -> Void) throws {
        lock.lock()
        defer { lock.unlock() }
        if !firstCreated, !committed {
            try create(tempPath)
            firstCreated = true
            return
        }
        firstCreated = true
        if let p = pendingFirst {
            try create(p)
            pendingFirst = nil
            return
        }
        let video = try storage.reserveVideo()
        reservations.append(video)
        try create(video.path)
    }

    /// The press became a hold: give the clip its DCF name. Returns the path.
    func commit() throws -> String {
        lock.lock()
        defer { lock.unlock() }
        guard !committed else { return renamedFirst ?? "" }
        let video = try storage.reserveVideo()
        if firstCreated {
            do {
                try retryingEINTR("rename", path: video.path) { rename(tempPath, video.path) }
                try AtomicFile.fsyncDirectory(video.name.directory, sync: storage.cardSync)
            } catch {
                video.abandon()
                throw error
            }
        } else {
            // First file not opened yet: the recorder opens it under this name.
            pendingFirst = video.path
        }
        committed = true
        reservations.append(video)
        renamedFirst = video.path
        return video.path
    }

    /// The DCF name reserved before the recorder opened its first file.
    private var pendingFirst: String?

    /// The recorder reports the paths it opened; the first may since have been renamed.
    func finalNames(_ recorded: [String]) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        return recorded.map { $0 == tempPath ? (renamedFirst ?? $0) : $0 }
    }

    /// The clip is finalised: every reserved file is made durable and handed to
    /// the low-space policy (one that was never written is removed).
    func finish() {
        lock.lock()
        let all = reservations
        reservations.removeAll()
        lock.unlock()
        for v in all {
            var st = stat()
            if lstat(v.path, &st) == 0, st.st_size == 0 { v.abandon() } else { try? v.finish() }
        }
    }

    /// The press was a tap: delete what was written.
    func discard() {
        lock.lock()
        defer { lock.unlock() }
        if !committed { unlink(tempPath) }
    }
}
