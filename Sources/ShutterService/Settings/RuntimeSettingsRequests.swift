// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterStorage

/// `shutterctl set | get | reset`, the double tap's flash mode and SIGHUP: the
/// runtime settings change, then take effect as `takeEffect` says.
extension CameraControlPlane {
    func set(_ key: String, to value: JSONValue, reply: Reply) -> [Effect] {
        let before = settings
        do throws(ConfigError) {
            try settings.set(key, to: value)
        } catch {
            reply.send(.failure(error.description))
            return []
        }
        ctx.log.notice("setting \(key) = \(settings.value(of: key).rendered(pretty: false))")
        return takeEffect(ops.begin(.set(key: key), reply: reply, before: before))
    }

    func get(_ key: String?) -> ControlReply {
        guard let key else {
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

    func reset(_ key: String?, reply: Reply) -> [Effect] {
        var reset: [String] = []
        let before = settings
        if let key {
            do throws(ConfigError) {
                try settings.reset(key)
            } catch {
                reply.send(.failure(error.description))
                return []
            }
        } else {
            reset = settings.resetAll()
        }
        ctx.log.notice("setting \(key ?? "every runtime change") back to the configuration")
        return takeEffect(ops.begin(.reset(key: key, reset: reset), reply: reply, before: before))
    }

    /// A double tap asks for the next flash mode: a runtime setting like any
    /// other, in force at once (the machine showed it on the flash LED).
    func flashModeChanged(to mode: FlashMode) {
        let key = "flash.mode"
        flashShown = mode  // the machine showed it on the flash LED
        guard settings.value(of: key) != .string(mode.rawValue) else { return }
        do throws(ConfigError) {
            try settings.set(key, to: .string(mode.rawValue), source: "double tap")
        } catch {
            ctx.log.warning("flash mode \(mode.rawValue) not kept: \(error.description)")
            return
        }
        save(op: nil)
    }

    /// SIGHUP: rereads the configuration file (a job).
    func reload() {
        guard let reload = reloadConfig else {
            ctx.log.notice("SIGHUP: no configuration file to reread in this process")
            return
        }
        ctx.log.notice("SIGHUP: rereading the configuration")
        jobs.add {
            let result: Result<ShutterConfig, ConfigError> = await Blocking.run(on: Self.settingsQueue) {
                Result { () throws(ConfigError) -> ShutterConfig in try reload() }
            }
            return .configReread(result)
        }
    }

    /// The configuration was reread: its settable keys take effect (runtime
    /// changes still win); any other key that changed needs a restart and is named.
    func reread(_ result: Result<ShutterConfig, ConfigError>) -> [Effect] {
        let new: ShutterConfig
        switch result {
        case .failure(let e):
            ctx.log.error("configuration: \(e.description)")
            ctx.log.warning("configuration not reread: the running settings are kept")
            return []
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
        guard CameraOpening(settings.effective) != opening else {
            unapplied = true
            return []
        }
        return takeEffect(ops.begin(.reload, reply: nil, before: previous))
    }
}
