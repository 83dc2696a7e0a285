import ShutterCore

/// A setting that the running camera cannot take (`CameraOpening`: the size
/// preference lists, `camera.hdr` to or from `sensor`): the camera is restarted
/// for it between captures, through the camera switch's `reopenCamera`, so the
/// same fallback holds: a camera that does not start with the new setting
/// starts again with the previous one, and the setting goes back.
extension CameraService {
    /// After `set`, `reset` or a reread configuration changed `settings` from
    /// `before`: restarts the camera when the opening changed. Nil when it did
    /// not (the caller applies the settings as usual); else the reply's note
    /// (`.success`) or error (`.failure`, the settings are `before` again).
    func restartCameraIfNeeded(before: RuntimeSettings) async -> Result<String, RestartRefusal>? {
        let wanted = CameraOpening(settings.effective)
        guard wanted != cameraOpening else { return nil }
        if stopping { return .failure(RestartRefusal(message: "shutterd is stopping", busy: false, revert: before)) }
        if cameraSwitching {
            return .failure(RestartRefusal(message: "busy: a camera switch or restart is in progress; try again",
                                           busy: true, revert: before))
        }
        cameraSwitching = true
        defer { cameraSwitching = false }
        let changed = Self.describeChange(from: cameraOpening, to: wanted)
        await waitBetweenCaptures(for: "camera restart for \(changed)")
        log.notice("camera restart for \(changed)")
        // The new controls are given at the open (`prepareCamera`), with the new opening.
        cameraControls = settings.effective.camera.controls
        let outcome = await reopenCamera(index: nil, opening: wanted, status: "restarting the camera")
        switch outcome {
        case .switched:
            settingsChanged()  // the flash mode and torch, if they changed too
            let granted = camera?.controlReport.videoSize.map { "; video \(Self.granted($0, of: wanted.videoSizes))" } ?? ""
            let hdr = wanted.sensorHDR ? (camera?.controlReport.sensorHDR == true ? "; sensor HDR on" : "") : ""
            log.notice("camera restarted for \(changed)\(granted)\(hdr)")
            return .success("the camera restarted for this change\(granted)\(hdr)")
        case .wentBack(let error, _):
            let message = "the camera did not start with \(changed): \(Self.reason(error)); it runs again with the "
                + "previous settings, which are kept"
            log.warning(message)
            lastError = message
            return .failure(RestartRefusal(message: message, busy: false, revert: before))
        case .failed(let error, let previousError):
            let message = "the camera did not start with \(changed): \(Self.reason(error)); starting it again with the "
                + "previous settings failed too: \(Self.reason(previousError)); it is retried like any camera that "
                + "stops, with the previous settings"
            log.error(message)
            lastError = message
            return .failure(RestartRefusal(message: message, busy: false, revert: before))
        }
    }

    /// A restart that did not happen or did not work: its message, and the
    /// settings to go back to.
    struct RestartRefusal: Error {
        var message: String
        var busy: Bool
        var revert: RuntimeSettings
    }

    /// "video.sizes 1280x720 (was 1920x1080)", "camera.hdr sensor (was off)".
    static func describeChange(from old: CameraOpening, to new: CameraOpening) -> String {
        func list(_ s: [PixelSize]) -> String { s.map(\.description).joined(separator: ", ") }
        var parts: [String] = []
        if old.videoSizes != new.videoSizes { parts.append("video.sizes \(list(new.videoSizes)) (was \(list(old.videoSizes)))") }
        if old.stillSizes != new.stillSizes { parts.append("still.sizes \(list(new.stillSizes)) (was \(list(old.stillSizes)))") }
        if old.sensorHDR != new.sensorHDR {
            parts.append(new.sensorHDR ? "camera.hdr sensor" : "camera.hdr away from sensor")
        }
        return parts.joined(separator: " and ")
    }
}
