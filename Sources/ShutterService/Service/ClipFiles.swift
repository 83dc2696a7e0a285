import Foundation
import ShutterCore
import ShutterStorage

/// Names the files of one clip. A clip starts speculatively at the press (the
/// press may still turn out to be a tap), so its first file is written under a
/// hidden temporary name in the storage root; when the press becomes a hold the
/// file is renamed onto its reserved DCF name (same filesystem, the recorder's
/// descriptor stays valid). Later segments get DCF names directly.
/// The lock guards every mutable field; `nextPath` runs on the encoder thread.
final class ClipFiles: @unchecked Sendable {
    private let lock = NSLock()
    private let storage: Storage
    private let tempPath: String
    private var committed = false
    private var firstCreated = false
    private var renamedFirst: String?

    init(storage: Storage, serial: Int) {
        self.storage = storage
        tempPath = (storage.root as NSString).appendingPathComponent(".shutter-pending-\(getpid())-\(serial).mp4")
    }

    /// Removes temporary clips a crash or power cut left behind (a press that
    /// never became a hold: nothing a person asked to keep).
    static func removeLeftovers(in root: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: root) else { return }
        for n in names where n.hasPrefix(".shutter-pending-") {
            unlink((root as NSString).appendingPathComponent(n))
        }
    }

    /// The recorder's callback for each new file.
    func nextPath() throws -> String {
        lock.lock()
        defer { lock.unlock() }
        if !firstCreated {
            firstCreated = true
            if !committed { return tempPath }
        }
        let name = try storage.reserve(.video)
        return name.path
    }

    /// The press became a hold: give the clip its DCF name. Returns the path.
    func commit() throws -> String {
        lock.lock()
        defer { lock.unlock() }
        guard !committed else { return renamedFirst ?? "" }
        committed = true
        if !firstCreated { return "" }  // first file not opened yet: nextPath names it
        let name = try storage.reserve(.video)
        do {
            try retryingEINTR("rename", path: name.path) { rename(tempPath, name.path) }
            try AtomicFile.fsyncDirectory(name.directory)
        } catch {
            storage.abandonVideo(name)
            throw error
        }
        renamedFirst = name.path
        return name.path
    }

    /// The recorder reports the paths it opened; the first may since have been renamed.
    func finalNames(_ recorded: [String]) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        return recorded.map { $0 == tempPath ? (renamedFirst ?? $0) : $0 }
    }

    /// The press was a tap: delete what was written.
    func discard() {
        lock.lock()
        defer { lock.unlock() }
        if !committed { unlink(tempPath) }
    }
}
