import ShutterCore

/// `shutterctl focus X Y | reset`: the camera demos' tap-to-focus. The point
/// becomes a small window (`PointOfInterest`) that is the runtime value of
/// `camera.focus.window` and `camera.exposure.window`, so it goes the way of
/// every runtime setting: applied between captures, remembered in the state
/// file, shown by `get`, undone by `reset` (README "Tap-to-focus").
extension CameraService {
    static let pointOfInterestKeys = ["camera.focus.window", "camera.exposure.window"]

    func focus(_ request: ControlRequest) async -> ControlReply {
        var notes: [String] = []
        if request.action == "reset" {
            for key in Self.pointOfInterestKeys { _ = try? settings.reset(key, source: "shutterctl focus reset") }
            log.notice("point of interest reset: the configuration's focus and exposure windows")
            notes.append("focus and exposure metering back to the configuration's windows")
            // The windows are controls of the running camera: never a restart, so never refused.
            if let n = (try? await settingsTakeEffect(before: settings)) ?? nil { notes.append(n) }
            return focusReply(notes)
        }
        guard request.action == nil else {
            return .failure("focus takes \"x\" and \"y\", or \"action\": \"reset\" (not \"\(request.action!)\")")
        }
        let point: PointOfInterest
        do throws(PointOfInterest.Refusal) {
            point = try PointOfInterest(x: request.x, y: request.y)
        } catch {
            return .failure(error.message)
        }
        let window = point.window(controls: settings.effective.camera.controls, rotation: config.camera.rotation,
                                  hflip: config.camera.hflip, vflip: config.camera.vflip)
        let value = JSONValue.array(window.map(JSONValue.double))
        let before = settings
        do throws(ConfigError) {
            for key in Self.pointOfInterestKeys { try settings.set(key, to: value, source: "shutterctl focus") }
        } catch {
            settings = before  // both or neither
            return .failure(error.description)
        }
        log.notice("point of interest \(point.x), \(point.y): focus and exposure windows \(value.rendered(pretty: false))")
        notes.append("focus and exposure metering on \(value.rendered(pretty: false))")
        let applied = (try? await settingsTakeEffect(before: before)) ?? nil
        let waiting = settingsWaiting
        if let applied { notes.append(applied) }
        notes.append(await focusAction(waiting: waiting))
        return focusReply(notes)
    }

    /// What the lens does about the new window, in words for the reply.
    private func focusAction(waiting: Bool) async -> String {
        guard let cam = camera else { return "no camera is open: the windows apply when it starts" }
        switch settings.effective.camera.controls.focus.effectiveMode {
        case .manual:
            let at = lastMetadata?.lensPosition.map { " (at \(Self.dioptres($0)) dioptres)" } ?? ""
            return "manual focus: the lens is left alone\(at)"
        case .continuous:
            return "continuous autofocus follows the window"
        case .auto:
            if waiting { return "autofocus mode: the window is used from the next press's autofocus cycle" }
            // A cycle of its own, as the demos' tap does; bounded, it never hangs the reply.
            let r = await cam.autofocus(timeout: .seconds(2))
            let lens = r.lensPosition.map { ", lens at \(Self.dioptres($0)) dioptres" } ?? ""
            if r.timedOut { return "autofocus cycle timed out after 2 s\(lens)" }
            return "autofocus cycle \(r.state == .focused ? "focused" : "did not focus (\(r.state))")\(lens)"
        }
    }

    private func focusReply(_ notes: [String]) -> ControlReply {
        var notes = notes
        // Said, never dropped: a window the camera cannot place (libcamera has no
        // exposure metering window; a fixed-focus lens no AfWindows).
        for l in camera?.controlReport.lacking ?? [] where l.keys.contains(where: Self.pointOfInterestKeys.contains) {
            notes.append("not applied: \(l)")
        }
        var reply = ControlReply(ok: true)
        reply.settings = Self.pointOfInterestKeys.map(settingState)
        reply.note = notes.joined(separator: "; ")
        return reply
    }

    private static func dioptres(_ d: Double) -> String { String(Double((d * 100).rounded()) / 100) }
}
