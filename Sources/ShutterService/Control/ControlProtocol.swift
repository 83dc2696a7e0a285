import Foundation

/// The control socket speaks one JSON object per line each way: a request, then
/// its reply. `shutterctl` is one client; `socat` or a test is another.
///
///     {"cmd":"tap"}                      -> {"ok":true,"files":["/…/SHTR0001.JPG"]}
///     {"cmd":"hold","seconds":3}         -> {"ok":true,"files":["/…/SHTR0002.MP4"]}
///     {"cmd":"status"}                   -> {"ok":true,"status":{…}}
///     {"cmd":"bogus"}                    -> {"ok":false,"error":"unknown command \"bogus\" (…)"}
public struct ControlRequest: Codable, Sendable, Equatable {
    /// status | tap | hold | press | release | photo | record | sim
    public var cmd: String
    /// hold: how long to hold, in seconds.
    public var seconds: Double?
    /// record: start | stop.
    public var action: String?
    /// sim: inject a camera fault (none | stall | disappear | error).
    public var fault: String?
    /// sim: set the scene's light level.
    public var lux: Double?
    /// sim: make the LEDs fail (true) or work (false).
    public var ledFailing: Bool?

    public init(cmd: String, seconds: Double? = nil, action: String? = nil, fault: String? = nil,
                lux: Double? = nil, ledFailing: Bool? = nil) {
        self.cmd = cmd
        self.seconds = seconds
        self.action = action
        self.fault = fault
        self.lux = lux
        self.ledFailing = ledFailing
    }

    public static let commands = ["status", "tap", "hold", "press", "release", "photo", "record", "sim"]
}

public struct ServiceStatus: Codable, Sendable, Equatable {
    public struct LEDState: Codable, Sendable, Equatable {
        public var on: Bool
        public var pattern: String
    }

    public struct Counters: Codable, Sendable, Equatable {
        public var photos = 0
        public var clips = 0
        public var droppedFrames = 0
        public var audioOverruns = 0
        public var errors = 0
        public var cameraRestarts = 0
        public var refusedPresses = 0
    }

    public var state: String
    public var board: String
    public var camera: String
    public var leds: [String: LEDState]
    public var flashMode: String
    public var counters: Counters
    public var freeBytes: UInt64?
    public var storageRoot: String
    public var lastError: String?
    public var lastFiles: [String]
    public var uptimeSeconds: Double
}

public struct ControlReply: Codable, Sendable, Equatable {
    public var ok: Bool
    public var error: String?
    public var files: [String]?
    public var status: ServiceStatus?
    /// tap/hold/photo: from the button edge (or command) to the file being durable.
    public var pressToDurableMs: Double?
    /// hold: the clip's first frame relative to the press (<= 0: it starts at or before it).
    public var clipStartOffsetMs: Double?
    /// A refusal because a capture is in progress (the request may be tried again).
    public var busy: Bool?
    /// What was done when it is not a file (`record start`: "recording").
    public var note: String?

    public init(ok: Bool, error: String? = nil, files: [String]? = nil, status: ServiceStatus? = nil) {
        self.ok = ok
        self.error = error
        self.files = files
        self.status = status
    }

    public static func failure(_ message: String) -> ControlReply { ControlReply(ok: false, error: message) }
}

enum ControlCoding {
    static func encode<T: Encodable>(_ value: T) -> Data {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var d = (try? e.encode(value)) ?? Data("{\"ok\":false,\"error\":\"encoding failed\"}".utf8)
        d.append(0x0A)
        return d
    }
}
