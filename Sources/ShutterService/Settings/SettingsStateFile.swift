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
/// chose, written after every change and read before the loop starts.
extension CameraControlPlane {
    /// Keeps the reads and writes in the order of the changes.
    static let settingsQueue = DispatchQueue(label: "shutter.settings")

    /// Writes the state file (no file when nothing is changed); the result goes to `op`.
    func save(op id: Int?) {
        if let id { ops[id]?.step = .saving }
        let text = settings.isEmpty ? nil : settings.stateDocument
        let storage = ctx.storage
        // The queue keeps writes in the order of the changes (the text is taken here).
        jobs.run(on: Self.settingsQueue) {
            let result: Result<Void, any Error> = Result {
                // Never onto the system disk under an unmounted card's mount point.
                if storage.requireMountPoint { try storage.checkHealth() }
                if let text {
                    try SettingsFile.write(text, root: storage.root)
                } else if unlink(SettingsFile.path(root: storage.root)) != 0 && errno != ENOENT {
                    throw SystemError(errno: errno, call: "unlink", path: SettingsFile.path(root: storage.root))
                }
            }
            guard case .failure(let e) = result else { return .settingsSaved(op: id, note: nil) }
            return .settingsSaved(op: id, note: "\(e)")
        }
    }

    /// The state file was written (or not): the operation's reply, or its AF cycle.
    func saved(op id: Int?, problem: String?) {
        if let problem { ctx.log.warning("runtime settings not remembered (they hold until a restart): \(problem)") }
        guard let id, let op = ops[id] else { return }
        if let problem { op.notes.append("not remembered across a restart: \(problem)") }
        let note = op.notes.isEmpty ? nil : op.notes.joined(separator: "; ")
        switch op.kind {
        case .set(let key):
            finish(id, ControlReply(setting: settingState(key), note: note))
        case .reset(let key?, _):
            finish(id, ControlReply(setting: settingState(key), note: note))
        case .reset(nil, let reset):
            var reply = ControlReply(ok: true)
            reply.settings = reset.map(settingState)
            reply.note = note ?? (reset.isEmpty ? "no runtime changes" : nil)
            finish(id, reply)
        case .focus(let autofocus):
            guard autofocus else { return finish(id, focusReply(op.notes)) }
            focusCycle(id)
        case .camera:
            op.step = .listingForReply
            listCameras(for: id)
        case .reload:
            _ = ops.remove(id)
        }
    }

    /// Before the loop: the state file's changes over the configuration. A file that
    /// cannot be read as settings is set aside (never fatal); a key this version
    /// does not know is dropped, each with a warning. Returns the camera a switch chose.
    func load() async -> CameraPick? {
        let root = ctx.storage.root, log = ctx.log
        let read: Result<String?, SystemError> = await Blocking.run(on: Self.settingsQueue) {
            Result { () throws(SystemError) -> String? in try SettingsFile.read(root: root) }
        }
        var problem: String?
        var changes: [String: JSONValue] = [:]
        var camera: CameraPick?
        var dirty = false
        switch read {
        case .success(nil):
            return nil
        case .success(let text?):
            do throws(ConfigError) {
                let parsed = try RuntimeSettings.parseState(text)
                changes = parsed.changes
                camera = parsed.camera
                for d in parsed.dropped { log.warning("runtime setting dropped from \(SettingsFile.path(root: root)): \(d)") }
                dirty = !parsed.dropped.isEmpty
            } catch {
                problem = "\(error.source): \(error.message)"
            }
        case .failure(let e):
            problem = "\(e)"
        }
        if let problem {
            let moved: Result<String, SystemError> = await Blocking.run(on: Self.settingsQueue) {
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
        settings = RuntimeSettings(base: settings.base, changes: changes, camera: camera)
        if !changes.isEmpty {
            log.notice("runtime settings from \(SettingsFile.path(root: root)): "
                       + changes.keys.sorted().map { "\($0) = \(changes[$0]!.rendered(pretty: false))" }.joined(separator: ", "))
        }
        unapplied = true
        target.controls = settings.effective.camera.controls
        target.opening = CameraOpening(settings.effective)
        if dirty { save(op: nil) }
        return camera
    }
}
