// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterControl
import ShutterCore
import ShutterStorage

/// What is published, as JSON, from what the service's live events and status say.
enum MQTTMessages {
    /// A live event as the `event` topic's message ("photo", "clip", "deleted"); nil
    /// for live events that are not events there (state, settings, the camera).
    /// `size` reads the file (so this runs on the MQTT queue, never the loop).
    static func event(_ e: LiveEvent, settings: MQTTSettings) -> (type: String, number: DCFNumber?, json: JSONObject)? {
        let type: String
        switch e.type {
        case "file":
            guard case .string(let kind)? = e.data["kind"] else { return nil }
            type = kind == "photo" ? "photo" : "clip"
        case "deleted":
            type = "deleted"
        default:
            return nil
        }
        guard case .string(let path)? = e.data["path"] else { return nil }
        var o: JSONObject = ["event_type": .string(type), "camera": .string(settings.name),
                             "name": .string(LiveReport.name(of: path))]
        // A way in other than the button or a request ("interval", "trigger").
        if case .string(let source)? = e.data["source"] { o["source"] = .string(source) }
        // The trigger input that made it ("pir"), with source "trigger".
        if case .string(let trigger)? = e.data["trigger"] { o["trigger"] = .string(trigger) }
        let number = Self.number(ofPath: path)
        if let n = number {
            o["number"] = .int(n.directory * 10000 + n.file)
            if type != "deleted", let url = settings.webURL { o["url"] = .string("\(url)/files/\(n.directory * 10000 + n.file)") }
        }
        if type != "deleted", let size = PlainIO.fileSize(path) {
            o["size"] = .int(size)
        }
        return (type, number, o)
    }

    /// 100SHUTR/SHTR0007.JPG → 100/7, from a path on the card.
    static func number(ofPath path: String) -> DCFNumber? {
        let comps = path.split(separator: "/")
        guard comps.count >= 2, let d = DCFNumber.directoryNumber(String(comps[comps.count - 2])),
              let f = DCFNumber.fileNumber(String(comps[comps.count - 1])) else { return nil }
        return DCFNumber(directory: d, file: f.file)
    }

    /// A gesture of the physical (or a client's) button as the `button` topic's word:
    /// "tap", "double-tap", "hold-start", "hold-end", "shutdown"; nil for the rest.
    static func gesture(_ e: LiveEvent) -> String? {
        guard e.type == "gesture", case .string(let g)? = e.data["gesture"] else { return nil }
        return g
    }

    /// The `status` message: the figures a dashboard shows.
    static func status(_ s: ServiceStatus, settings: MQTTSettings, queued: Int, dropped: Int) -> JSONObject {
        var o: JSONObject = [
            "camera": .string(settings.name), "state": .string(s.state), "board": .string(s.board),
            "cameraModel": .string(s.camera.model), "photos": .int(s.counters.photos), "clips": .int(s.counters.clips),
            "errors": .int(s.counters.errors), "refusedPresses": .int(s.counters.refusedPresses),
            "uptimeSeconds": .int(Int(s.uptimeSeconds)), "flashMode": .string(s.flashMode),
            "mqtt": .object(["queuedEvents": .int(queued), "droppedEvents": .int(dropped)]),
        ]
        if let t = s.torch { o["torch"] = .bool(t) }
        if let v = s.camera.videoSize { o["videoSize"] = .string(v.description) }
        o["exposureEv"] = .double(s.exposureEv ?? s.camera.asked.exposure.ev)
        if let c = settings.health.temperature() { o["cpuTemperature"] = .double(c) }
        if let t = settings.health.throttled() { o["throttled"] = .object(t) }
        if let f = s.freeBytes { o["freeBytes"] = .int(Int(clamping: f)) }
        if let v = s.version { o["version"] = .string(v) }
        if let e = s.lastError { o["lastError"] = .string(e) }
        if let u = s.upload {
            var up: JSONObject = ["waitingFiles": .int(u.waitingFiles), "waitingBytes": .int(Int(clamping: u.waitingBytes)),
                                  "verifiedFiles": .int(u.verifiedFiles), "failedFiles": .int(u.failedFiles),
                                  "failing": .bool(u.failing), "paused": .bool(u.paused), "remote": .string(u.remote)]
            if let e = u.lastError { up["lastError"] = .string(e) }
            if let f = u.lastUploaded { up["lastUploaded"] = .string(f) }
            o["upload"] = .object(up)
        }
        return o
    }

    static func data(_ o: JSONObject) -> Data { Data(JSONValue.object(o).rendered(pretty: false).utf8) }
}
