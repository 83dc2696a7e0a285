// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore

/// What `get`, `status` and the replies show of the settings and the camera:
/// each setting's value, where it comes from and what is in effect; the camera
/// part of `status`. It keeps nothing: it reads the settings (`AskedSettings`) and
/// the camera in use (`CameraInUse`) when asked.
struct ControlView {
    let asked: AskedSettings
    let inUse: CameraInUse

    /// `shutterctl get [KEY]`.
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

    /// One setting as `get` shows it.
    func settingState(_ key: String) -> SettingState {
        let settings = asked.settings
        return SettingState(key: key, value: settings.value(of: key),
                            source: settings.changes[key] == nil ? "config" : "runtime", effective: effectiveValue(key))
    }

    /// What is in effect, only where there is a fact: the last frame's exposure
    /// time, analogue gain, colour gains and lens position; the flash mode and
    /// torch the capture machine is given; else what the camera was given,
    /// unless it lacks the control.
    private func effectiveValue(_ key: String) -> JSONValue? {
        let lights = asked.lights, lastMetadata = inUse.lastMetadata
        switch key {
        case "flash.mode": return .string(lights.flashMode.rawValue)
        case "video.torch": return .bool(lights.videoTorch)
        case "camera.exposure.shutterUs": return lastMetadata?.exposureTimeMicroseconds.map(JSONValue.int)
        case "camera.exposure.gain": return lastMetadata?.analogueGain.map(JSONValue.double)
        default: break
        }
        guard let camera = inUse.camera else { return nil }
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

    /// The reply to `shutterctl focus`: the two windows and `notes`, with any window
    /// the camera cannot place.
    func focusReply(_ notes: [String]) -> ControlReply {
        var notes = notes
        // Said, never dropped: a window the camera cannot place (libcamera has no
        // exposure metering window; a fixed-focus lens no AfWindows).
        let keys = AskedSettings.pointOfInterestKeys
        for l in inUse.camera?.controlReport.lacking ?? [] where l.keys.contains(where: keys.contains) {
            notes.append("not applied: \(l)")
        }
        var reply = ControlReply(ok: true)
        reply.settings = keys.map(settingState)
        reply.note = notes.joined(separator: "; ")
        return reply
    }

    /// The `camera` part of `status`.
    var status: ServiceStatus.Camera {
        let opening = inUse.opening, lastMetadata = inUse.lastMetadata
        let video = opening.videoSizes, still = opening.stillSizes
        guard let camera = inUse.camera else {
            return ServiceStatus.Camera(model: "none", asked: inUse.controls, lacking: [], videoSize: nil,
                                        stillSize: nil, videoSizesAsked: video, stillSizesAsked: still)
        }
        let r = camera.controlReport
        return ServiceStatus.Camera(
            model: camera.info.model, index: inUse.inUseIndex, id: camera.info.id, asked: r.asked,
            lacking: r.lacking, videoSize: r.videoSize, stillSize: r.stillSize,
            videoSizesAsked: video, stillSizesAsked: still,
            videoSizeEntry: r.videoSize.flatMap { SizePreference.entry(of: $0, in: video) },
            stillSizeEntry: r.stillSize.flatMap { SizePreference.entry(of: $0, in: still) },
            sensorHdr: r.sensorHDR, frame: lastMetadata, stillStream: r.stillStream, bufferMemory: r.bufferMemory,
            videoSizeNote: r.videoSizeNote)
    }
}
