// SPDX-License-Identifier: BSD-2-Clause
import ShutterBuild
import ShutterCore

/// The control socket speaks one JSON object per line each way: a request, then
/// its reply. `shutterctl` is one client; `socat` or a test is another.
///
///     {"cmd":"tap"}                      -> {"ok":true,"files":["/…/SHTR0001.JPG"]}
///     {"cmd":"hold","seconds":3}         -> {"ok":true,"files":["/…/SHTR0002.MP4"]}
///     {"cmd":"status"}                   -> {"ok":true,"status":{…}}
///     {"cmd":"set","key":"camera.exposure.ev","value":2}
///                                        -> {"ok":true,"key":"camera.exposure.ev","source":"runtime","value":2}
///     {"cmd":"get","key":"flash.mode"}   -> {"ok":true,"effective":"auto","key":"flash.mode","source":"config","value":"auto"}
///     {"cmd":"reset"}                    -> {"ok":true,"settings":[…the keys reset, at their config values…]}
///     {"cmd":"focus","x":0.3,"y":0.8}    -> {"ok":true,"note":"…","settings":[camera.focus.window, camera.exposure.window]}
///     {"cmd":"focus","action":"reset"}   -> the same, back at their config values
///     {"cmd":"camera","camera":"next"} -> {"ok":true,"camera":{"id":"sim:1","index":1,"model":"imx219"},"note":"switched from …"}
///     {"cmd":"web-token","action":"add","name":"ha","scope":"view"}
///                                        -> {"ok":true,"token":"…","tokens":[{"name":"ha","scope":"view",…}]}
///     {"cmd":"web-token","action":"list"} / {"cmd":"web-token","action":"revoke","name":"ha"}
///     {"cmd":"files"}                    -> {"ok":true,"items":[{"number":1000007,"name":"SHTR0007.JPG","kind":"photo",…}, …]}
///     {"cmd":"delete","file":"last"}     -> {"ok":true,"deleted":{"number":1000007,"name":"SHTR0007.JPG",…}}
///     {"cmd":"bogus"}                    -> {"ok":false,"error":"unknown command \"bogus\" (…)"}
public struct ControlRequest: Codable, Sendable, Equatable {
    /// status | tap | hold | press | release | photo | record | sim | set | get | reset | focus | camera |
    /// files | delete
    public var cmd: String
    /// hold: how long to hold, in seconds.
    public var seconds: Double?
    /// record: start | stop. focus: reset.
    public var action: String?
    /// sim: inject a camera fault (none | stall | disappear | error).
    public var fault: String?
    /// sim: set the scene's light level.
    public var lux: Double?
    /// sim: make the LEDs fail (true) or work (false).
    public var ledFailing: Bool?
    /// sim: the trigger input (`triggers.inputs` name) whose simulated line `active` moves.
    public var trigger: String?
    /// sim: the trigger's line active (true) or inactive (false).
    public var active: Bool?
    /// set / get / reset: a setting's key path ("camera.exposure.ev"); get and
    /// reset without one: every setting.
    public var key: String?
    /// set: the new value, as JSON (`2`, `"daylight"`, `[1.5,2]`, `null`).
    public var value: JSONValue?
    /// focus: the point of interest, 0...1 across and down the picture.
    public var x: Double?
    public var y: Double?
    /// camera: "next", an index ("1") or a model to switch to; absent: list the cameras.
    public var camera: String?
    /// web-token (action add | list | revoke): the token's name, and its scope (add: view | control).
    public var name: String?
    public var scope: String?
    /// delete: a file's number as `files` lists it ("1000007" = 100SHUTR/SHTR0007), or "last".
    public var file: String?
    /// timelapse: the range's ends (a photo's number or a time, `TimelapseBound`), the film's
    /// frames per second, its size ("1280x720") and its file name in DCIM/.
    public var from: String?
    public var to: String?
    public var fps: Int?
    public var size: String?
    public var output: String?

    public init(cmd: String, seconds: Double? = nil, action: String? = nil, fault: String? = nil,
                lux: Double? = nil, ledFailing: Bool? = nil, key: String? = nil, value: JSONValue? = nil,
                camera: String? = nil, file: String? = nil) {
        self.cmd = cmd
        self.seconds = seconds
        self.action = action
        self.fault = fault
        self.lux = lux
        self.ledFailing = ledFailing
        self.key = key
        self.value = value
        self.camera = camera
        self.file = file
    }

    public static let commands = ["status", "tap", "hold", "press", "release", "photo", "record", "sim",
                                  "set", "get", "reset", "focus", "camera", "events", "web-token", "files",
                                  "delete", "mqtt", "trouble", "upload", "upload-report", "interval", "timelapse"]

    private enum CodingKeys: String, CodingKey {
        case cmd, seconds, action, fault, lux, ledFailing, key, value
        case x, y
        case camera
        case name, scope, file
        case from, to, fps, size, output
        case trigger, active
    }

    // By hand for `value`: a JSON null there is the value null, not a missing value;
    // numbers through their bounds (RequestNumber: refused before any arithmetic).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        cmd = try c.decode(String.self, forKey: .cmd)
        seconds = try c.decodeIfPresent(RequestNumber.holdSeconds, forKey: .seconds)
        action = try c.decodeIfPresent(String.self, forKey: .action)
        fault = try c.decodeIfPresent(String.self, forKey: .fault)
        lux = try c.decodeIfPresent(RequestNumber.simLux, forKey: .lux)
        ledFailing = try c.decodeIfPresent(Bool.self, forKey: .ledFailing)
        key = try c.decodeIfPresent(String.self, forKey: .key)
        value = c.contains(.value) ? try c.decode(JSONValue.self, forKey: .value) : nil
        x = try c.decodeIfPresent(RequestNumber.focusX, forKey: .x)
        y = try c.decodeIfPresent(RequestNumber.focusY, forKey: .y)
        camera = try c.decodeIfPresent(String.self, forKey: .camera)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        scope = try c.decodeIfPresent(String.self, forKey: .scope)
        // A number as JSON (1000007) is the same file as its text.
        file = try (try? c.decodeIfPresent(Int.self, forKey: .file)).map(String.init)
            ?? c.decodeIfPresent(String.self, forKey: .file)
        from = try (try? c.decodeIfPresent(Int.self, forKey: .from)).map(String.init)
            ?? c.decodeIfPresent(String.self, forKey: .from)
        to = try (try? c.decodeIfPresent(Int.self, forKey: .to)).map(String.init) ?? c.decodeIfPresent(String.self, forKey: .to)
        fps = try c.decodeIfPresent(Int.self, forKey: .fps)
        size = try c.decodeIfPresent(String.self, forKey: .size)
        output = try c.decodeIfPresent(String.self, forKey: .output)
        trigger = try c.decodeIfPresent(String.self, forKey: .trigger)
        active = try c.decodeIfPresent(Bool.self, forKey: .active)
    }
}

/// One runtime setting as `get`, `set` and `reset` show it.
public struct SettingState: Codable, Sendable, Equatable {
    public var key: String
    /// The value the service runs with (or will, once the capture in progress ends).
    public var value: JSONValue
    /// "runtime" (a `set` holds it) or "config" (the configuration's value).
    public var source: String
    /// What is in effect, where there is a fact to show: the last frame's
    /// exposure time, gain or lens position, the flash mode and torch in force,
    /// else what the camera was given (absent while it lacks the control).
    public var effective: JSONValue?

    public init(key: String, value: JSONValue, source: String, effective: JSONValue? = nil) {
        self.key = key
        self.value = value
        self.source = source
        self.effective = effective
    }

    private enum CodingKeys: String, CodingKey { case key, value, source, effective }

    // By hand: a JSON null is a value here (the camera was given `camera.roi`: null).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        key = try c.decode(String.self, forKey: .key)
        value = try c.decode(JSONValue.self, forKey: .value)
        source = try c.decode(String.self, forKey: .source)
        effective = c.contains(.effective) ? try c.decode(JSONValue.self, forKey: .effective) : nil
    }
}

/// Which frame a photo is and how long it took (docs/control-and-api.md "The moment of the press").
public struct PhotoReport: Codable, Sendable, Equatable {
    public var path: String
    /// "press" (the frame at the press, from the running stream), "focused"
    /// (autofocus, then a full-resolution still after the release), or "video"
    /// (a photo during a recording in the `focused` moment: the next video frame).
    public var moment: String
    /// The photo's exposure start minus the press edge (negative: before the press).
    public var pressToExposureMs: Double
    /// From the release (a request's arrival) to the file being durable.
    public var releaseToDurableMs: Double
    public var width: Int
    public var height: Int
    /// The longest time between two video frames from this photo's start until
    /// now: about one frame period when the video went on (`press`), the mode
    /// switch when the still stopped it (`focused`). Status only.
    public var videoGapMs: Double?

    public init(path: String, moment: String, pressToExposureMs: Double, releaseToDurableMs: Double,
                width: Int, height: Int, videoGapMs: Double? = nil) {
        self.path = path
        self.moment = moment
        self.pressToExposureMs = pressToExposureMs
        self.releaseToDurableMs = releaseToDurableMs
        self.width = width
        self.height = height
        self.videoGapMs = videoGapMs
    }
}

public struct ServiceStatus: Codable, Sendable, Equatable {
    public struct LEDState: Codable, Sendable, Equatable {
        public var on: Bool
        public var pattern: String

        public init(on: Bool, pattern: String) {
            self.on = on
            self.pattern = pattern
        }
    }

    public struct Counters: Codable, Sendable, Equatable {
        public var photos = 0
        public var clips = 0
        public var droppedFrames = 0
        public var audioOverruns = 0
        public var errors = 0
        public var cameraRestarts = 0
        public var refusedPresses = 0
        /// Button edges the GPIO reader could not queue (the loop fell behind by a bounded queue's worth).
        public var droppedButtonEdges = 0

        public init(photos: Int = 0, clips: Int = 0, droppedFrames: Int = 0, audioOverruns: Int = 0,
                    errors: Int = 0, cameraRestarts: Int = 0, refusedPresses: Int = 0, droppedButtonEdges: Int = 0) {
            self.photos = photos
            self.clips = clips
            self.droppedFrames = droppedFrames
            self.audioOverruns = audioOverruns
            self.errors = errors
            self.cameraRestarts = cameraRestarts
            self.refusedPresses = refusedPresses
            self.droppedButtonEdges = droppedButtonEdges
        }
    }

    /// The live H.264 (RTSP and the page's `/api/live.mp4`): viewers now and frames sent
    /// and dropped (a viewer behind loses frames up to the next keyframe).
    public struct LiveCounters: Codable, Sendable, Equatable {
        public var rtspViewers = 0
        public var rtspFramesSent = 0
        public var rtspFramesDropped = 0
        /// RTSP requests refused for a wrong or missing password.
        public var rtspRefused = 0
        /// RTSP viewers closed because they stopped reading.
        public var rtspStalledClosed = 0
        /// RTSP connections open now (viewers and peers that have not asked yet).
        public var rtspConnections = 0
        /// RTSP connections closed at once: too many from one address, or in all.
        public var rtspTurnedAway = 0
        /// RTSP connections closed for sending no request, or holding no session, in time.
        public var rtspIdleClosed = 0
        public var pageViewers = 0
        public var pageFramesSent = 0
        public var pageFramesDropped = 0
        /// Whether the live video runs an encoder of its own (pre-roll off and someone watching).
        public var ownEncoder = false

        public init() {}
    }

    /// The camera and what it does with the sensor controls.
    public struct Camera: Codable, Sendable, Equatable {
        /// The camera's model, "none" while no camera is open.
        public var model: String
        /// The camera in use: its index in libcamera's order (`shutterctl camera`
        /// lists them) and libcamera's id; absent while no camera is open.
        public var index: Int?
        public var id: String?
        /// What the configuration asks of the sensor (the `camera.*` control keys).
        public var asked: CameraControls
        /// Asked-for controls this camera lacks, each with why ("AfMode": "this camera has no autofocus").
        public var lacking: [LackingControl]
        /// The video size the pipeline granted at the last start; absent before one.
        public var videoSize: PixelSize?
        /// The still size it granted for the last still; absent before one.
        public var stillSize: PixelSize?
        /// The sizes asked for, best first (`video.sizes` / `still.sizes`, else width x height).
        public var videoSizesAsked: [PixelSize]
        public var stillSizesAsked: [PixelSize]
        /// Which of them was granted (0 = the first); absent before a grant, or
        /// when the camera granted none of them exactly (it adjusted the last).
        public var videoSizeEntry: Int?
        public var stillSizeEntry: Int?
        /// The sensor's own HDR mode is on (`camera.hdr` `sensor`, switched at the open).
        public var sensorHdr: Bool?
        /// What the newest frame's metadata says is in effect (exposure time, gains,
        /// colour temperature and gains, EV, white balance, zoom, lens, AF state);
        /// only what the camera reports, absent before the first frame.
        public var frame: FrameMetadata?
        /// `still.moment` `press`: whether the camera runs a still stream beside
        /// video as of its last start (`granted`, `size`), or why not (`reason`);
        /// absent when none was asked (`focused`) or reported (the sim without one).
        public var stillStream: StillStreamReport? = nil
        /// The frame buffers the last video start allocated, per stream (count, bytes
        /// per buffer, bytes) and in all (`totalBytes`): what a Pi's CMA area must hold.
        /// Absent before a start, and for the simulated camera.
        public var bufferMemory: BufferMemoryReport? = nil
        /// How the video size came about when the camera granted none asked
        /// (`videoSizeEntry` absent): "the nearest to 1280x720 of the 14 sizes the camera lists".
        public var videoSizeNote: String? = nil

        public init(model: String, index: Int? = nil, id: String? = nil, asked: CameraControls,
                    lacking: [LackingControl], videoSize: PixelSize? = nil, stillSize: PixelSize? = nil,
                    videoSizesAsked: [PixelSize], stillSizesAsked: [PixelSize], videoSizeEntry: Int? = nil,
                    stillSizeEntry: Int? = nil, sensorHdr: Bool? = nil, frame: FrameMetadata? = nil,
                    stillStream: StillStreamReport? = nil, bufferMemory: BufferMemoryReport? = nil,
                    videoSizeNote: String? = nil) {
            self.model = model
            self.index = index
            self.id = id
            self.asked = asked
            self.lacking = lacking
            self.videoSize = videoSize
            self.stillSize = stillSize
            self.videoSizesAsked = videoSizesAsked
            self.stillSizesAsked = stillSizesAsked
            self.videoSizeEntry = videoSizeEntry
            self.stillSizeEntry = stillSizeEntry
            self.sensorHdr = sensorHdr
            self.frame = frame
            self.stillStream = stillStream
            self.bufferMemory = bufferMemory
            self.videoSizeNote = videoSizeNote
        }
    }

    public var state: String
    public var board: String
    public var camera: Camera
    public var leds: [String: LEDState]
    public var flashMode: String
    public var counters: Counters
    public var freeBytes: UInt64?
    public var storageRoot: String
    public var lastError: String?
    public var lastFiles: [String]
    public var uptimeSeconds: Double
    /// The last photo's moment and timing; absent before one.
    public var lastPhoto: PhotoReport? = nil
    /// The pre-roll ring (`video.prerollSeconds`); absent when pre-roll is off.
    public var preroll: PrerollReport? = nil
    /// The web page's live preview: frames encoded and frames skipped (the preview
    /// thread was still busy: the recorder never waits for it); absent without one.
    public var preview: PreviewFigures? = nil
    /// While a clip records: its seconds so far and until it stops on its own.
    public var recording: RecordingFigures? = nil
    /// What the service holds in memory (malloc's bytes in use, RSS); absent where unknown.
    public var memory: MemoryFigures? = nil
    /// The upload queue (`upload.enabled`), as the uploader last reported it; absent with uploads off.
    public var upload: UploadReport? = nil
    /// Interval capture (`interval.enabled`): its schedule, clock and counts; absent when off.
    public var interval: IntervalReport? = nil
    /// The time stamp in the picture (`overlay.enabled`); absent when off.
    public var overlay: OverlayReport? = nil
    /// The time-lapse film being made (`shutterctl timelapse`); absent when none is.
    public var timelapse: TimelapseReport? = nil
    /// The trigger inputs (`triggers.inputs`), in the configuration's order; absent with none.
    public var triggers: [TriggerReport]? = nil
    /// `video.torch` as in force (`shutterctl set video.torch`); absent from an older shutterd.
    public var torch: Bool? = nil
    /// `camera.exposure.ev` as asked (set at once by `shutterctl set`; `camera.asked` is what
    /// the camera was last given); absent from an older shutterd.
    public var exposureEv: Double? = nil
    /// The version of the shutterd that answers (`shutterd --version`); absent from one
    /// older than versions.
    public var version: String? = ShutterVersion.string

    // Public memberwise initializers here and above: the service (another module)
    // assembles the status, and Swift's implicit ones are internal.
    public init(state: String, board: String, camera: Camera, leds: [String: LEDState], flashMode: String,
                counters: Counters, freeBytes: UInt64? = nil, storageRoot: String, lastError: String? = nil,
                lastFiles: [String], uptimeSeconds: Double, lastPhoto: PhotoReport? = nil,
                preroll: PrerollReport? = nil, preview: PreviewFigures? = nil) {
        self.state = state
        self.board = board
        self.camera = camera
        self.leds = leds
        self.flashMode = flashMode
        self.counters = counters
        self.freeBytes = freeBytes
        self.storageRoot = storageRoot
        self.lastError = lastError
        self.lastFiles = lastFiles
        self.uptimeSeconds = uptimeSeconds
        self.lastPhoto = lastPhoto
        self.preroll = preroll
        self.preview = preview
    }

    public struct RecordingFigures: Codable, Sendable, Equatable {
        public var elapsedSeconds: Double
        public var remainingSeconds: Double

        public init(elapsedSeconds: Double, remainingSeconds: Double) {
            self.elapsedSeconds = elapsedSeconds
            self.remainingSeconds = remainingSeconds
        }
    }

    public struct MemoryFigures: Codable, Sendable, Equatable {
        /// Bytes malloc has handed out and not had back (glibc mallinfo2): what a leak grows.
        public var heapBytes: Int?
        /// Resident set size (VmRSS).
        public var residentBytes: Int?

        public init(heapBytes: Int?, residentBytes: Int?) {
            self.heapBytes = heapBytes
            self.residentBytes = residentBytes
        }
    }

    public struct PreviewFigures: Codable, Sendable, Equatable {
        public var encoded: Int
        public var skipped: Int
        /// The live H.264's viewers and frames (RTSP, the page's `/api/live.mp4`); absent
        /// when none is served.
        public var live: LiveCounters? = nil

        public init(encoded: Int, skipped: Int) {
            self.encoded = encoded
            self.skipped = skipped
        }
    }
}

/// What the pre-roll ring holds now and the most it may (docs/control-and-api.md "The moment of the press").
public struct PrerollReport: Codable, Sendable, Equatable {
    /// `video.prerollSeconds`.
    public var seconds: Int
    /// Video held, first packet to newest (the pre-roll plus up to the slack).
    public var heldSeconds: Double
    /// Encoded video and raw audio held.
    public var bytes: Int
    /// The ring never holds more: beyond it the oldest keyframe intervals go first.
    public var boundBytes: Int
    /// Keyframe intervals dropped at the bound since the start (the pre-roll was shorter then).
    public var capEvictions: Int
    /// Why the pre-roll encoder stopped, if it did.
    public var error: String?

    public init(seconds: Int, heldSeconds: Double, bytes: Int, boundBytes: Int, capEvictions: Int, error: String?) {
        self.seconds = seconds
        self.heldSeconds = heldSeconds
        self.bytes = bytes
        self.boundBytes = boundBytes
        self.capEvictions = capEvictions
        self.error = error
    }
}

public struct ControlReply: Codable, Sendable, Equatable {
    public var ok: Bool
    public var error: String?
    public var files: [String]?
    public var status: ServiceStatus?
    /// tap/hold/photo: from the button edge (or command) to the file being durable.
    public var pressToDurableMs: Double?
    /// hold: the clip's first frame's exposure start relative to the press (<= 0: it starts at or before it).
    public var clipStartOffsetMs: Double?
    /// tap/photo: the photo's exposure start minus the press edge (negative: before the press).
    public var pressToExposureMs: Double?
    /// tap/photo: from the release (a request's arrival) to the file being durable.
    public var releaseToDurableMs: Double?
    /// tap/photo: "press", "focused" or "video" (docs/control-and-api.md "The moment of the press").
    public var moment: String?
    /// A refusal because a capture is in progress (the request may be tried again).
    public var busy: Bool?
    /// What was done when it is not a file (`record start`: "recording").
    public var note: String?
    /// `upload status`: the queue as the uploader last reported it.
    public var upload: UploadReport?
    /// `interval status|pause|resume|reset`: interval capture as it stands after the command.
    public var interval: IntervalReport?
    /// `timelapse`: the film made (or being made, for `timelapse status`).
    public var timelapse: TimelapseReport?
    /// set / get KEY / reset KEY: the setting (flat: `"key"`, `"value"`, `"source"`, `"effective"`).
    public var key: String?
    public var value: JSONValue?
    public var source: String?
    public var effective: JSONValue?
    /// get / reset without a key: every setting (get), or the ones reset.
    public var settings: [SettingState]?
    /// camera without an argument: every camera, `inUse` marking the one running.
    public var cameras: [CameraListing]?
    /// camera NEXT|INDEX|MODEL: the camera in use after the switch (or after going back).
    public var camera: CameraListing?
    /// web-token add: the new token, shown this once.
    public var token: String?
    /// web-token add (the new one) / list (every one) / revoke (the revoked one).
    public var tokens: [WebTokenListing]?
    /// files: the finished photos and clips, newest first.
    public var items: [MediaEntry]?
    /// delete: the file deleted.
    public var deleted: MediaEntry?
    /// delete: refused because there is no such finished file (or, for `last`, no photo just taken).
    public var notFound: Bool?

    public init(ok: Bool, error: String? = nil, files: [String]? = nil, status: ServiceStatus? = nil) {
        self.ok = ok
        self.error = error
        self.files = files
        self.status = status
    }

    public init(setting: SettingState, note: String? = nil) {
        self.init(ok: true)
        key = setting.key
        value = setting.value
        source = setting.source
        effective = setting.effective
        self.note = note
    }

    public static func failure(_ message: String) -> ControlReply { ControlReply(ok: false, error: message) }

    private enum CodingKeys: String, CodingKey {
        case ok, error, files, status, pressToDurableMs, clipStartOffsetMs, busy, note
        case pressToExposureMs, releaseToDurableMs, moment
        case key, value, source, effective, settings
        case cameras, camera
        case token, tokens, items, deleted, notFound, upload, interval, timelapse
    }

    // By hand for `value` and `effective`: a JSON null there is a value (`camera.roi`: null).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        ok = try c.decode(Bool.self, forKey: .ok)
        error = try c.decodeIfPresent(String.self, forKey: .error)
        files = try c.decodeIfPresent([String].self, forKey: .files)
        status = try c.decodeIfPresent(ServiceStatus.self, forKey: .status)
        pressToDurableMs = try c.decodeIfPresent(Double.self, forKey: .pressToDurableMs)
        clipStartOffsetMs = try c.decodeIfPresent(Double.self, forKey: .clipStartOffsetMs)
        pressToExposureMs = try c.decodeIfPresent(Double.self, forKey: .pressToExposureMs)
        releaseToDurableMs = try c.decodeIfPresent(Double.self, forKey: .releaseToDurableMs)
        moment = try c.decodeIfPresent(String.self, forKey: .moment)
        busy = try c.decodeIfPresent(Bool.self, forKey: .busy)
        note = try c.decodeIfPresent(String.self, forKey: .note)
        key = try c.decodeIfPresent(String.self, forKey: .key)
        value = c.contains(.value) ? try c.decode(JSONValue.self, forKey: .value) : nil
        source = try c.decodeIfPresent(String.self, forKey: .source)
        effective = c.contains(.effective) ? try c.decode(JSONValue.self, forKey: .effective) : nil
        settings = try c.decodeIfPresent([SettingState].self, forKey: .settings)
        cameras = try c.decodeIfPresent([CameraListing].self, forKey: .cameras)
        camera = try c.decodeIfPresent(CameraListing.self, forKey: .camera)
        token = try c.decodeIfPresent(String.self, forKey: .token)
        tokens = try c.decodeIfPresent([WebTokenListing].self, forKey: .tokens)
        items = try c.decodeIfPresent([MediaEntry].self, forKey: .items)
        deleted = try c.decodeIfPresent(MediaEntry.self, forKey: .deleted)
        notFound = try c.decodeIfPresent(Bool.self, forKey: .notFound)
        upload = try c.decodeIfPresent(UploadReport.self, forKey: .upload)
        interval = try c.decodeIfPresent(IntervalReport.self, forKey: .interval)
        timelapse = try c.decodeIfPresent(TimelapseReport.self, forKey: .timelapse)
    }
}

public enum ControlCoding {
    /// One line of the protocol: compact JSON, keys sorted, slashes as they are (PlainJSON:
    /// JSONEncoder's text without FoundationEssentials), then a newline. shutterd's side
    /// has `encode` for the same bytes as Data (ControlCoding+Data.swift).
    public static func line<T: Encodable>(_ value: T) -> [UInt8] {
        var d = (try? PlainJSON.encode(value)) ?? Array("{\"ok\":false,\"error\":\"encoding failed\"}".utf8)
        d.append(0x0A)
        return d
    }
}
