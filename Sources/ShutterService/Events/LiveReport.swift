// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterStorage

/// What live watchers (`/api/events`, `shutterctl events`) are told. One
/// mechanism: after every event the loop hands over what it knows now
/// (`Snapshot`), and whatever differs from what watchers last saw is published —
/// the state (and a recording's seconds, once a second as they change), each file
/// saved, each setting changed, the camera switched. Only a deletion, which
/// leaves nothing behind to compare, is told directly.
final class LiveReport {
    struct Snapshot {
        var state: CaptureState
        /// While recording: since when, and when it stops on its own.
        var recording: (from: MonotonicTime, end: MonotonicTime)?
        var lastError: String?
        var lastFiles: [String]
        var settings: RuntimeSettings
        var camera: CameraInfo?
    }

    /// What the state event says, compared after every event (frames included)
    /// without building its JSON: that is built only when this changes.
    struct Shown: Equatable {
        var state: CaptureState
        var elapsedSeconds: Int?
        var remainingSeconds: Int?
        /// The error a camera-unavailable state names.
        var error: String?
    }

    private let events: LiveEvents
    private var shown: Shown?
    private var files: [String] = []
    private var settings: RuntimeSettings?
    private var cameraID: String?

    init(events: LiveEvents) { self.events = events }

    func settle(_ now: Snapshot, at time: MonotonicTime) {
        let s = Self.shown(now, at: time)
        if s != shown {
            shown = s
            events.publish(LiveEvent(type: "state", data: Self.state(s)))
        }
        if now.lastFiles != files {
            for path in now.lastFiles where !files.contains(path) {
                guard let kind = Self.kind(of: path) else { continue }
                events.publish(LiveEvent(type: "file", data: ["path": .string(path), "kind": .string(kind),
                                                               "name": .string(Self.name(of: path))]))
            }
            files = now.lastFiles
        }
        if let before = settings, before != now.settings {
            for key in RuntimeSettings.settableKeys where before.value(of: key) != now.settings.value(of: key) {
                events.publish(LiveEvent(type: "setting", data: ["name": .string(key), "value": now.settings.value(of: key)]))
            }
        }
        settings = now.settings
        if let c = now.camera, c.id != cameraID {
            // The first camera is part of the state a watcher starts from, not a switch.
            if cameraID != nil {
                events.publish(LiveEvent(type: "camera", data: ["id": .string(c.id), "model": .string(c.model)]))
            }
            cameraID = c.id
        }
    }

    /// A file the service deleted (by number, on request).
    func deleted(path: String) {
        events.publish(LiveEvent(type: "deleted", data: ["path": .string(path), "name": .string(Self.name(of: path))]))
    }

    /// A gesture of the button (the physical one or a client's press): "tap",
    /// "double-tap", "hold-start", "hold-end", "shutdown-countdown", "shutdown". Told
    /// directly: a gesture leaves no state behind to compare.
    func gesture(_ g: GestureEvent) {
        let word: String
        switch g {
        case .tap: word = "tap"
        case .doubleTap: word = "double-tap"
        case .holdStarted: word = "hold-start"
        case .hold: word = "hold-end"
        case .shutdownCountdown: word = "shutdown-countdown"
        case .shutdown: word = "shutdown"
        case .pressed, .shutdownCancelled: return
        }
        events.publish(LiveEvent(type: "gesture", data: ["gesture": .string(word)]))
    }

    static func shown(_ now: Snapshot, at time: MonotonicTime) -> Shown {
        var s = Shown(state: now.state)
        switch now.state {
        case .recording:
            if let r = now.recording {
                // Whole seconds, both from the elapsed time, so the state changes (and
                // is sent) once a second.
                let second: Int64 = 1_000_000_000
                let elapsed = max(.zero, time - r.from).nanoseconds / second
                let total = ((r.end - r.from).nanoseconds + second - 1) / second
                s.elapsedSeconds = Int(elapsed)
                s.remainingSeconds = Int(max(0, total - elapsed))
            }
        case .cameraUnavailable:
            s.error = now.lastError
        default:
            break
        }
        return s
    }

    static func state(_ now: Snapshot, at time: MonotonicTime) -> JSONObject { state(shown(now, at: time)) }

    /// The state in the page's words (ready, recording, saving, starting, error,
    /// stopping) with the service's own (`detail`, as `status.state`).
    static func state(_ s: Shown) -> JSONObject {
        var o: JSONObject = ["detail": .string(ServiceLoop.describe(s.state))]
        switch s.state {
        case .booting:
            o["state"] = .string("starting")
        case .idle, .pressed:
            o["state"] = .string("ready")
        case .takingPhoto, .finalising:
            o["state"] = .string("saving")
        case .recording:
            o["state"] = .string("recording")
            if let e = s.elapsedSeconds, let left = s.remainingSeconds {
                o["elapsedSeconds"] = .int(e)
                o["remainingSeconds"] = .int(left)
            }
        case .cameraUnavailable:
            o["state"] = .string("error")
            o["ledCode"] = .int(LEDErrorCode.noCamera.rawValue)
            o["message"] = .string(s.error ?? LEDErrorCode.noCamera.meaning)
        case .storageUnavailable(let code):
            o["state"] = .string("error")
            o["ledCode"] = .int(code.rawValue)
            o["message"] = .string(code.meaning)
        case .shutdownCountdown, .shuttingDown, .poweredOff:
            o["state"] = .string("stopping")
        }
        return o
    }

    /// "photo" or "video"; nil for what is not a medium of its own (a clip's poster).
    static func kind(of path: String) -> String? {
        switch path.split(separator: ".").last?.uppercased() {
        case "JPG", "JPEG": return "photo"
        case "MP4", "MOV", "MKV": return "video"
        default: return nil
        }
    }

    static func name(of path: String) -> String { String(path.split(separator: "/").last ?? "") }
}
