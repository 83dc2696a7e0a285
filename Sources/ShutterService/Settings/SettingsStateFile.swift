// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ShutterCore
import ShutterStorage

/// The state file (`SettingsFile`): the runtime changes and the camera a switch
/// chose, written after every change and read before the loop starts. Its reads
/// and writes run on one queue, in the order of the changes.
struct SettingsStateFile {
    /// Keeps the reads and writes in the order of the changes.
    static let queue = DispatchQueue(label: "shutter.settings")

    let storage: Storage
    let log: Log
    let jobs: Jobs

    /// Writes `settings` (no file when nothing is changed); the result goes to operation `id`.
    func save(_ settings: RuntimeSettings, op id: Int?) {
        let text = settings.isEmpty ? nil : settings.stateDocument
        let storage = self.storage
        // The queue keeps writes in the order of the changes (the text is taken here).
        jobs.run(on: Self.queue) {
            let result: Result<Void, any Error> = Result {
                // Never onto the system disk under an unmounted card's mount point.
                if storage.requireMountPoint { try storage.checkHealth() }
                if let text {
                    try SettingsFile.write(text, root: storage.root, sync: storage.cardSync)
                } else if unlink(SettingsFile.path(root: storage.root)) != 0 && errno != ENOENT {
                    throw SystemError(errno: errno, call: "unlink", path: SettingsFile.path(root: storage.root))
                }
            }
            guard case .failure(let e) = result else { return .settingsSaved(op: id, note: nil) }
            return .settingsSaved(op: id, note: "\(e)")
        }
    }

    /// What the state file holds: the runtime changes, the camera a switch chose, and
    /// whether keys were dropped (the file is to be written again without them).
    struct Contents {
        var changes: [String: JSONValue]
        var camera: CameraPick?
        var dirty: Bool
    }

    /// Before the loop: the state file's contents, nil without one. A file that
    /// cannot be read as settings is set aside (never fatal, nil); a key this version
    /// does not know is dropped, each with a warning.
    func load() async -> Contents? {
        let root = storage.root, log = self.log
        let read: Result<String?, SystemError> = await Blocking.run(on: Self.queue) {
            Result { () throws(SystemError) -> String? in try SettingsFile.read(root: root) }
        }
        var problem: String?
        var contents = Contents(changes: [:], camera: nil, dirty: false)
        switch read {
        case .success(nil):
            return nil
        case .success(let text?):
            do throws(ConfigError) {
                let parsed = try RuntimeSettings.parseState(text)
                contents.changes = parsed.changes
                contents.camera = parsed.camera
                for d in parsed.dropped { log.warning("runtime setting dropped from \(SettingsFile.path(root: root)): \(d)") }
                contents.dirty = !parsed.dropped.isEmpty
            } catch {
                problem = "\(error.source): \(error.message)"
            }
        case .failure(let e):
            problem = "\(e)"
        }
        if let problem {
            let moved: Result<String, SystemError> = await Blocking.run(on: Self.queue) {
                Result { () throws(SystemError) -> String in try SettingsFile.setAside(root: root) }
            }
            switch moved {
            case .success(let aside):
                log.warning("runtime settings file \(SettingsFile.path(root: root)) is unreadable (\(problem)); "
                            + "moved to \(aside), starting with the configuration's settings")
            case .failure(let e):
                log.warning("runtime settings file \(SettingsFile.path(root: root)) is unreadable (\(problem)) "
                            + "and could not be moved aside (\(e)); starting with the configuration's settings")
            }
            return nil
        }
        return contents
    }
}
