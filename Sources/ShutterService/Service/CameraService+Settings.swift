import Foundation
import ShutterCore
import ShutterStorage

/// Runtime settings (`shutterctl set | get | reset`, SIGHUP): the sensor
/// controls, `flash.mode` and `video.torch`, changed while the service runs,
/// remembered in the state file beside the file counter, and applied between
/// captures. What they mean and how they are checked is `RuntimeSettings`.
///
/// Why between captures, when libcamera would take a control with the next
/// request: the Pi's exposure and white balance loops converge over several
/// frames, so a change landing during a still's warm-up gives a photo exposed
/// between two settings, and one landing mid-clip a visible jump (and a zoom
/// mid-clip a cut in the framing). A change is for the next capture: it waits
/// while a photo, a press or a clip is in progress and is applied the moment
/// the machine is idle again.
extension CameraService {
    private static let settingsQueue = DispatchQueue(label: "shutter.settings")

    // MARK: Requests

    func setSetting(_ request: ControlRequest) async -> ControlReply {
        guard let key = request.key, let value = request.value else {
            return .failure("set needs \"key\" and \"value\", e.g. {\"cmd\":\"set\",\"key\":\"camera.exposure.ev\",\"value\":2}")
        }
        let before = settings
        do throws(ConfigError) {
            try settings.set(key, to: value)
        } catch {
            return .failure(error.description)
        }
        log.notice("setting \(key) = \(settings.value(of: key).rendered(pretty: false))")
        do throws(RestartRefusal) {
            let note = try await settingsTakeEffect(before: before)
            return ControlReply(setting: settingState(key), note: note)
        } catch {
            return Self.refused(error)
        }
    }

    func getSetting(_ request: ControlRequest) -> ControlReply {
        guard let key = request.key else {
            var r = ControlReply(ok: true)
            r.settings = RuntimeSettings.settableKeys.map(settingState)
            return r
        }
        do throws(ConfigError) {
            _ = try RuntimeSettings.settableKey(key, source: "shutterctl get")
        } catch {
            return .failure(error.description)
        }
        return ControlReply(setting: settingState(key))
    }

    func resetSetting(_ request: ControlRequest) async -> ControlReply {
        var reset: [String] = []
        let before = settings
        if let key = request.key {
            do throws(ConfigError) {
                try settings.reset(key)
            } catch {
                return .failure(error.description)
            }
        } else {
            reset = settings.resetAll()
        }
        log.notice("setting \(request.key ?? "every runtime change") back to the configuration")
        let note: String?
        do throws(RestartRefusal) {
            note = try await settingsTakeEffect(before: before)
        } catch {
            return Self.refused(error)
        }
        if let key = request.key { return ControlReply(setting: settingState(key), note: note) }
        var reply = ControlReply(ok: true)
        reply.settings = reset.map(settingState)
        reply.note = note ?? (reset.isEmpty ? "no runtime changes" : nil)
        return reply
    }

    /// After `set` or `reset` changed the settings from `before`: applies them
    /// (or leaves them waiting for the capture in progress; one that needs the
    /// camera restarted waits for it, then restarts it) and, when applied,
    /// waits until the camera has them, so the reply's `effective` is what
    /// runs; then remembers them. Returns the reply's note, nil when there is
    /// nothing to add. A restart that failed or could not start puts `before`
    /// back and throws why.
    func settingsTakeEffect(before: RuntimeSettings) async throws(RestartRefusal) -> String? {
        var waiting: String?
        var restarted: String?
        switch await restartCameraIfNeeded(before: before) {
        case nil:
            waiting = settingsChanged()
        case .success(let note)?:
            restarted = note
        case .failure(let refusal)?:
            settings = refusal.revert
            settingsChanged()
            throw refusal
        }
        if waiting == nil, controlsInFlight {
            await withCheckedContinuation { controlWaiters.append($0) }
        }
        let saved = await saveSettings()
        let notes = [restarted, waiting, saved].compactMap { $0 }
        return notes.isEmpty ? nil : notes.joined(separator: "; ")
    }

    /// The reply to a change whose camera restart failed (or could not start).
    static func refused(_ r: RestartRefusal) -> ControlReply {
        var reply = ControlReply.failure(r.message)
        if r.busy { reply.busy = true }
        return reply
    }

    /// One setting as `get` shows it.
    func settingState(_ key: String) -> SettingState {
        SettingState(key: key, value: settings.value(of: key),
                     source: settings.changes[key] == nil ? "config" : "runtime", effective: effectiveValue(key))
    }

    /// What is in effect, only where there is a fact: the last frame's exposure
    /// time, analogue gain, colour gains and lens position (what the sensor and
    /// its auto loops did); the machine's flash mode and torch; else what the
    /// camera was given, unless it lacks the control. Nil with no camera, or
    /// when the camera cannot do it.
    private func effectiveValue(_ key: String) -> JSONValue? {
        switch key {
        case "flash.mode": return .string(machine.flashMode.rawValue)
        case "video.torch": return .bool(machine.configuration.videoTorch)
        case "camera.exposure.shutterUs": return lastMetadata?.exposureTimeMicroseconds.map(JSONValue.int)
        case "camera.exposure.gain": return lastMetadata?.analogueGain.map(JSONValue.double)
        default: break
        }
        guard let camera else { return nil }
        let report = camera.controlReport
        if report.lacking.contains(where: { $0.keys.contains(key) }) { return nil }
        if key == "camera.focus.lensPosition", let p = lastMetadata?.lensPosition { return .double(p) }
        if key == "camera.whiteBalance.gains", let g = lastMetadata?.colourGains { return .array(g.map(JSONValue.double)) }
        return Self.value(of: key, in: report.asked)
    }

    /// A `camera.*` key's value in a set of controls, normalized as the schema has it.
    private static func value(of key: String, in controls: CameraControls) -> JSONValue? {
        guard key.hasPrefix("camera."), let schema = ConfigSchema.byPath[key],
              let data = try? JSONEncoder().encode(controls),
              let tree = try? JSONParser.parse(String(decoding: data, as: UTF8.self)).value,
              let v = tree.value(at: String(key.dropFirst("camera.".count)))
        else { return nil }
        return (try? ConfigSchema.check(v, for: schema)) ?? v
    }

    // MARK: Applying

    /// The settings changed: applied now if no capture is in progress, else
    /// when it ends. Returns a note for the reply when they wait.
    @discardableResult
    func settingsChanged() -> String? {
        settingsWaiting = true
        applySettingsIfIdle()
        return settingsWaiting ? "applied when the capture in progress ends" : nil
    }

    /// No photo, press, clip or snapshot in progress.
    var betweenCaptures: Bool {
        guard clip == nil, inProgress.isEmpty, pendingSnapshots.isEmpty else { return false }
        switch machine.state {
        case .idle, .booting, .cameraUnavailable, .storageUnavailable: return true
        default: return false
        }
    }

    /// Called after every machine step and on the timer: applies settings
    /// that wait, once the captures are over.
    func applySettingsIfIdle() {
        guard settingsWaiting, betweenCaptures else { return }
        settingsWaiting = false
        let wanted = settings.effective
        let now = clock.now()
        let flash = FlashMode(wanted.flash.mode)
        if machine.flashMode != flash { apply(machine.handle(.setFlashMode(flash), at: now)) }
        if machine.configuration.videoTorch != wanted.video.torch {
            apply(machine.handle(.setVideoTorch(wanted.video.torch), at: now))
        }
        if cameraControls != wanted.camera.controls {
            cameraControls = wanted.camera.controls
            pushControls()
        }
    }

    /// Hands `cameraControls` to the camera, one change at a time; a newer one
    /// that arrived meanwhile follows when it is done.
    private func pushControls() {
        guard !controlsInFlight, let cam = camera, cam.controlReport.asked != cameraControls else { return }
        controlsInFlight = true
        let controls = cameraControls
        spawn {
            await cam.apply(controls)
            await self.controlsPushed()
        }
    }

    private func controlsPushed() {
        controlsInFlight = false
        // What the camera lacks may have changed with the controls: said once, as at a start.
        if let lacking = camera?.controlReport.lacking { logLacking(lacking) }
        pushControls()
        if !controlsInFlight {
            let waiters = controlWaiters
            controlWaiters = []
            for w in waiters { w.resume() }
        }
    }

    /// Before every camera start (the first, a restart, a camera opened again):
    /// the controls in force, so a remembered setting holds from the first frame.
    func prepareCamera(_ cam: any CameraDevice) async {
        let controls = cameraControls
        if cam.controlReport.asked != controls { await cam.apply(controls) }
    }

    /// A double tap changed the flash mode: a runtime setting like any other.
    func flashModeChanged(to mode: FlashMode) {
        let key = "flash.mode"
        guard settings.value(of: key) != .string(mode.rawValue) else { return }
        do throws(ConfigError) {
            try settings.set(key, to: .string(mode.rawValue), source: "double tap")
        } catch {
            log.warning("flash mode \(mode.rawValue) not kept: \(error.description)")
            return
        }
        spawn { _ = await self.saveSettings() }
    }

    // MARK: The state file

    /// At start: the state file's changes over the configuration. A file that
    /// cannot be read as settings is set aside (never fatal); a key this
    /// version does not know is dropped, each with a warning.
    func loadSettings() async {
        let root = storage.root
        let read: Result<String?, SystemError> = await Blocking.run(on: Self.settingsQueue) {
            Result { () throws(SystemError) -> String? in try SettingsFile.read(root: root) }
        }
        var problem: String?
        var changes: [String: JSONValue] = [:]
        var camera: CameraPick?
        switch read {
        case .success(nil):
            return
        case .success(let text?):
            do throws(ConfigError) {
                let parsed = try RuntimeSettings.parseState(text)
                changes = parsed.changes
                camera = parsed.camera
                for d in parsed.dropped { log.warning("runtime setting dropped from \(SettingsFile.path(root: root)): \(d)") }
                if !parsed.dropped.isEmpty { settingsDirty = true }
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
            return
        }
        settings = RuntimeSettings(base: settings.base, changes: changes, camera: camera)
        if !changes.isEmpty {
            log.notice("runtime settings from \(SettingsFile.path(root: root)): "
                       + changes.keys.sorted().map { "\($0) = \(changes[$0]!.rendered(pretty: false))" }.joined(separator: ", "))
        }
        settingsChanged()
        if settingsDirty { _ = await saveSettings() }
    }

    /// Writes the state file (no file when nothing is changed). Returns a note
    /// for the reply when it could not be written: the change holds until a restart.
    func saveSettings() async -> String? {
        settingsDirty = false
        let text = settings.isEmpty ? nil : settings.stateDocument
        let storage = self.storage
        // The queue keeps writes in the order of the changes (the text is taken here, on the actor).
        let result: Result<Void, any Error> = await Blocking.run(on: Self.settingsQueue) {
            Result {
                // Never onto the system disk under an unmounted card's mount point.
                if storage.requireMountPoint { try storage.checkHealth() }
                if let text {
                    try SettingsFile.write(text, root: storage.root)
                } else if unlink(SettingsFile.path(root: storage.root)) != 0 && errno != ENOENT {
                    throw SystemError(errno: errno, call: "unlink", path: SettingsFile.path(root: storage.root))
                }
            }
        }
        guard case .failure(let e) = result else { return nil }
        log.warning("runtime settings not remembered (they hold until a restart): \(e)")
        return "not remembered across a restart: \(e)"
    }

    // MARK: SIGHUP

    /// Rereads the configuration file: its settable keys take effect (runtime
    /// changes still win over them); any other key that changed needs a restart
    /// and is named. A file with an error changes nothing and says why, as at start.
    func reloadConfiguration() {
        guard let reload = reloadConfig else {
            log.notice("SIGHUP: no configuration file to reread in this process")
            return
        }
        log.notice("SIGHUP: rereading the configuration")
        spawn {
            let result: Result<ShutterConfig, ConfigError> = await Blocking.run(on: Self.settingsQueue) {
                Result { () throws(ConfigError) -> ShutterConfig in try reload() }
            }
            await self.configurationReread(result)
        }
    }

    private func configurationReread(_ result: Result<ShutterConfig, ConfigError>) {
        let new: ShutterConfig
        switch result {
        case .failure(let e):
            log.error("configuration: \(e.description)")
            log.warning("configuration not reread: the running settings are kept")
            return
        case .success(let c):
            new = c
        }
        let previous = settings
        let running = config.tree(), reread = new.tree(), before = settings.base.tree()
        for leaf in reread.leaves() where !RuntimeSettings.isSettable(leaf.path) {
            if running.value(at: leaf.path) != leaf.value { log.warning("needs a restart: \(leaf.path)") }
        }
        let changed = RuntimeSettings.settableKeys.filter { before.value(at: $0) != reread.value(at: $0) }
        settings.rebase(new)
        for key in changed {
            let shadow = settings.changes[key].map { " (the runtime setting \($0.rendered(pretty: false)) still wins)" } ?? ""
            log.notice("configuration reread: \(key) = \(reread.value(at: key)?.rendered(pretty: false) ?? "null")\(shadow)")
        }
        guard CameraOpening(settings.effective) != cameraOpening else {
            settingsChanged()
            return
        }
        // New sizes or sensor HDR: the camera restarts for them (or keeps the running ones).
        spawn {
            do throws(RestartRefusal) {
                _ = try await self.settingsTakeEffect(before: previous)
            } catch {
                self.log.warning("configuration reread: \(error.message)")
            }
        }
    }
}
