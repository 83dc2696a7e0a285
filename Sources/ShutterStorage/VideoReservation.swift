// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import Synchronization

/// A video's file name, created empty and held by the recorder until it is
/// done. While held, the low-space policy never deletes it; `finish` makes it
/// durable and lets the policy consider it, `abandon` removes an unwritten one.
/// One of the two must happen: a reservation dropped without either is
/// finished then (so a clip is never kept out of the policy for good).
public final class VideoReservation: Sendable {
    public let name: ReservedName
    private let storage: Storage
    private let settled = Mutex(false)

    init(name: ReservedName, storage: Storage) {
        self.name = name
        self.storage = storage
    }

    public var path: String { name.path }

    /// fsync of the file and its directory; the clip becomes an ordinary finished video.
    public func finish() throws(StorageError) {
        guard settle() else { return }
        try storage.finishVideo(name)
    }

    /// The recording never wrote it: the empty placeholder goes (its number stays used).
    public func abandon() {
        guard settle() else { return }
        storage.abandonVideo(name)
    }

    private func settle() -> Bool {
        settled.withLock { done in defer { done = true }; return !done }
    }

    deinit {
        if settle() { try? storage.finishVideo(name) }
    }
}

extension Storage {
    /// Reserves the next video name as a value the recorder must finish (or abandon).
    public func reserveVideo() throws(StorageError) -> VideoReservation {
        VideoReservation(name: try reserve(.video), storage: self)
    }
}
