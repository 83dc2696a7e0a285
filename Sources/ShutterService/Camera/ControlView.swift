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

/// What `get` and `status` show of the control plane: each setting's value,
/// where it comes from and what is in effect; the camera part of `status`.
extension CameraControlPlane {
    /// One setting as `get` shows it.
    func settingState(_ key: String) -> SettingState {
        SettingState(key: key, value: settings.value(of: key),
                     source: settings.changes[key] == nil ? "config" : "runtime", effective: effectiveValue(key))
    }

    /// What is in effect, only where there is a fact: the last frame's exposure
    /// time, analogue gain, colour gains and lens position; the flash mode and
    /// torch the capture machine is given; else what the camera was given,
    /// unless it lacks the control.
    private func effectiveValue(_ key: String) -> JSONValue? {
        switch key {
        case "flash.mode": return .string(lights.flashMode.rawValue)
        case "video.torch": return .bool(lights.videoTorch)
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

    /// The `camera` part of `status`.
    var status: ServiceStatus.Camera {
        let video = opening.videoSizes, still = opening.stillSizes
        guard let camera else {
            return ServiceStatus.Camera(model: "none", asked: controls, lacking: [], videoSize: nil,
                                        stillSize: nil, videoSizesAsked: video, stillSizesAsked: still)
        }
        let r = camera.controlReport
        return ServiceStatus.Camera(
            model: camera.info.model, index: inUseIndex, id: camera.info.id, asked: r.asked,
            lacking: r.lacking, videoSize: r.videoSize, stillSize: r.stillSize,
            videoSizesAsked: video, stillSizesAsked: still,
            videoSizeEntry: r.videoSize.flatMap { SizePreference.entry(of: $0, in: video) },
            stillSizeEntry: r.stillSize.flatMap { SizePreference.entry(of: $0, in: still) },
            sensorHdr: r.sensorHDR, frame: lastMetadata, stillStream: r.stillStream, bufferMemory: r.bufferMemory,
            videoSizeNote: r.videoSizeNote)
    }
}
