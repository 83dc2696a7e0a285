// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterStorage

/// What is asked for: the configuration's settable keys with the runtime changes
/// over them (`shutterctl set | reset`, tap-to-focus's windows, the double tap's
/// flash mode, SIGHUP's reread, the state file's), whether the camera still
/// lacks them, and the flash mode the LED last showed.
///
/// Each change is made here and logged; `ControlOperations` then takes it to the
/// camera (a reopen when the opening changed) and to the state file.
final class AskedSettings {
    let ctx: ServiceContext
    let live: LiveReport
    /// The configuration's settable keys with the runtime changes over them.
    /// Live watchers are told each change where it happens.
    var settings: RuntimeSettings {
        didSet { live.settingsChanged(from: oldValue, to: settings) }
    }
    /// Changed settings not yet applied (a capture was in progress).
    var unapplied = false
    /// The flash mode the flash LED last showed (a double tap's, or one set): a new mode
    /// is shown between captures.
    private(set) var flashShown: FlashMode

    init(ctx: ServiceContext, live: LiveReport) {
        self.ctx = ctx
        self.live = live
        settings = RuntimeSettings(base: ctx.config)
        flashShown = FlashMode(ctx.config.flash.mode)
    }

    /// The flash mode and torch in force: the settings' (the machine is given them).
    var lights: CaptureLights {
        CaptureLights(flashMode: FlashMode(settings.effective.flash.mode), videoTorch: settings.effective.video.torch)
    }

    /// What the camera is to be opened with.
    var opening: CameraOpening { CameraOpening(settings.effective) }

    /// Between captures: the flash mode to show, when the LED last showed another.
    func flashToShow(betweenCaptures: Bool) -> FlashMode? {
        guard betweenCaptures, lights.flashMode != flashShown else { return nil }
        flashShown = lights.flashMode
        return flashShown
    }

    // MARK: Changes

    /// `shutterctl set`: the settings before, or nil when refused (the reply says why).
    func set(_ key: String, to value: JSONValue, reply: Reply) -> RuntimeSettings? {
        let before = settings
        do throws(ConfigError) {
            try settings.set(key, to: value)
        } catch {
            reply.send(.failure(error.description))
            return nil
        }
        ctx.log.notice("setting \(key) = \(settings.value(of: key).rendered(pretty: false))")
        return before
    }

    /// `shutterctl reset [KEY]`: the settings before and the keys `reset` without a key
    /// put back, or nil when refused (the reply says why).
    func reset(_ key: String?, reply: Reply) -> (before: RuntimeSettings, reset: [String])? {
        var reset: [String] = []
        let before = settings
        if let key {
            do throws(ConfigError) {
                try settings.reset(key)
            } catch {
                reply.send(.failure(error.description))
                return nil
            }
        } else {
            reset = settings.resetAll()
        }
        ctx.log.notice("setting \(key ?? "every runtime change") back to the configuration")
        return (before, reset)
    }

    static let pointOfInterestKeys = ["camera.focus.window", "camera.exposure.window"]

    /// `shutterctl focus X Y | reset`: the point becomes a small window that is the
    /// runtime value of `camera.focus.window` and `camera.exposure.window` (reset: the
    /// configuration's). The settings before, whether an AF cycle follows and what was
    /// done, or nil when refused (the reply says why).
    func pointOfInterest(_ request: ServiceCommand.FocusRequest,
                         reply: Reply) -> (before: RuntimeSettings, autofocus: Bool, note: String)? {
        let before = settings
        guard case .point(let point) = request else {
            for key in Self.pointOfInterestKeys { _ = try? settings.reset(key, source: "shutterctl focus reset") }
            ctx.log.notice("point of interest reset: the configuration's focus and exposure windows")
            return (before, false, "focus and exposure metering back to the configuration's windows")
        }
        let c = ctx.config.camera
        let window = point.window(controls: settings.effective.camera.controls, rotation: c.rotation,
                                  hflip: c.hflip, vflip: c.vflip)
        let value = JSONValue.array(window.map(JSONValue.double))
        do throws(ConfigError) {
            for key in Self.pointOfInterestKeys { try settings.set(key, to: value, source: "shutterctl focus") }
        } catch {
            settings = before  // both or neither
            reply.send(.failure(error.description))
            return nil
        }
        ctx.log.notice("point of interest \(point.x), \(point.y): focus and exposure windows \(value.rendered(pretty: false))")
        return (before, true, "focus and exposure metering on \(value.rendered(pretty: false))")
    }

    /// A double tap asks for the next flash mode: a runtime setting like any
    /// other, in force at once (the machine showed it on the flash LED).
    /// Returns whether the settings changed (the state file is to be written).
    func flashModeChanged(to mode: FlashMode) -> Bool {
        let key = "flash.mode"
        flashShown = mode  // the machine showed it on the flash LED
        guard settings.value(of: key) != .string(mode.rawValue) else { return false }
        do throws(ConfigError) {
            try settings.set(key, to: .string(mode.rawValue), source: "double tap")
        } catch {
            ctx.log.warning("flash mode \(mode.rawValue) not kept: \(error.description)")
            return false
        }
        return true
    }

    /// The configuration was reread (SIGHUP): its settable keys take effect (runtime
    /// changes still win); any other key that changed needs a restart and is named.
    /// Returns the settings before, or nil when the file could not be read.
    func reread(_ result: Result<ShutterConfig, ConfigError>) -> RuntimeSettings? {
        let new: ShutterConfig
        switch result {
        case .failure(let e):
            ctx.log.error("configuration: \(e.description)")
            ctx.log.warning("configuration not reread: the running settings are kept")
            return nil
        case .success(let c):
            new = c
        }
        let previous = settings
        let running = ctx.config.tree(), reread = new.tree(), before = settings.base.tree()
        for leaf in reread.leaves() where !RuntimeSettings.isSettable(leaf.path) {
            if running.value(at: leaf.path) != leaf.value { ctx.log.warning("needs a restart: \(leaf.path)") }
        }
        let changed = RuntimeSettings.settableKeys.filter { before.value(at: $0) != reread.value(at: $0) }
        settings.rebase(new)
        for key in changed {
            let shadow = settings.changes[key].map { " (the runtime setting \($0.rendered(pretty: false)) still wins)" } ?? ""
            ctx.log.notice("configuration reread: \(key) = \(reread.value(at: key)?.rendered(pretty: false) ?? "null")\(shadow)")
        }
        return previous
    }

    /// Before the loop: the state file's changes (and the camera a switch chose) over the configuration.
    func adopt(changes: [String: JSONValue], camera: CameraPick?) {
        settings = RuntimeSettings(base: settings.base, changes: changes, camera: camera)
        if !changes.isEmpty {
            ctx.log.notice("runtime settings from \(SettingsFile.path(root: ctx.storage.root)): "
                           + changes.keys.sorted().map { "\($0) = \(changes[$0]!.rendered(pretty: false))" }
                               .joined(separator: ", "))
        }
        unapplied = true
    }
}

extension FlashMode {
    init(_ mode: ShutterConfig.Flash.Mode) {
        switch mode {
        case .off: self = .off
        case .on: self = .on
        case .auto: self = .auto
        }
    }
}
