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
import Synchronization

/// Names the files of one clip. A clip starts speculatively at the press (the
/// press may still turn out to be a tap), so its first file is written under a
/// hidden temporary name in the storage root; when the press becomes a hold the
/// file is renamed onto its reserved DCF name (same filesystem, the recorder's
/// descriptor stays valid). Later segments get DCF names directly. Every DCF
/// name is a `VideoReservation`, finished when the clip is (`finish`).
/// `state`'s lock is held across each file's creation; `open` runs on the encoder thread.
final class ClipFiles: Sendable {
    private struct State {
        var committed = false
        var firstCreated = false
        var renamedFirst: String?
        /// The DCF name reserved before the recorder opened its first file.
        var pendingFirst: String?
        var reservations: [VideoReservation] = []
    }

    private let state = Mutex(State())
    private let storage: Storage
    private let tempPath: String

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
        try state.withLock { s throws in
            if !s.firstCreated, !s.committed {
                try create(tempPath)
                s.firstCreated = true
                return
            }
            s.firstCreated = true
            if let p = s.pendingFirst {
                try create(p)
                s.pendingFirst = nil
                return
            }
            let video = try storage.reserveVideo()
            s.reservations.append(video)
            try create(video.path)
        }
    }

    /// The press became a hold: give the clip its DCF name. Returns the path.
    func commit() throws -> String {
        try state.withLock { s throws -> String in
            guard !s.committed else { return s.renamedFirst ?? "" }
            let video = try storage.reserveVideo()
            if s.firstCreated {
                do {
                    try retryingEINTR("rename", path: video.path) { rename(tempPath, video.path) }
                    try AtomicFile.fsyncDirectory(video.name.directory, sync: storage.cardSync)
                } catch {
                    video.abandon()
                    throw error
                }
            } else {
                // First file not opened yet: the recorder opens it under this name.
                s.pendingFirst = video.path
            }
            s.committed = true
            s.reservations.append(video)
            s.renamedFirst = video.path
            return video.path
        }
    }

    /// The recorder reports the paths it opened; the first may since have been renamed.
    func finalNames(_ recorded: [String]) -> [String] {
        let renamedFirst = state.withLock { $0.renamedFirst }
        return recorded.map { $0 == tempPath ? (renamedFirst ?? $0) : $0 }
    }

    /// The clip is finalised: every reserved file is made durable and handed to
    /// the low-space policy (one that was never written is removed).
    func finish() {
        let all = state.withLock { s in
            defer { s.reservations.removeAll() }
            return s.reservations
        }
        for v in all {
            var st = stat()
            if lstat(v.path, &st) == 0, st.st_size == 0 { v.abandon() } else { try? v.finish() }
        }
    }

    /// The press was a tap: delete what was written.
    func discard() {
        state.withLock { s in
            if !s.committed { unlink(tempPath) }
        }
    }
}
