// SPDX-License-Identifier: BSD-2-Clause
/// A control that was asked for and is not in effect, and why.
public struct LackingControl: Codable, Equatable, Sendable, CustomStringConvertible {
    /// libcamera's name of the control ("AfMode").
    public var control: String
    public var reason: String
    /// The configuration keys that asked for it.
    public var keys: [String]

    public init(control: String, reason: String, keys: [String]) {
        self.control = control
        self.reason = reason
        self.keys = keys
    }

    public init(_ id: CameraControlID, reason: String? = nil) {
        self.init(control: id.rawValue, reason: reason ?? id.lackingReason, keys: id.keys)
    }

    /// "AfMode: this camera has no autofocus".
    public var description: String { "\(control): \(reason)" }
}

/// A frame size in pixels (what a stream was asked for or granted).
public struct PixelSize: Codable, Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// "1920x1080" (also with "X" or "×"); nil for anything else.
    public init?(parsing text: String) {
        let parts = text.trimmedSpaces.lowercased()
            .split(omittingEmptySubsequences: false) { $0 == "x" || $0 == "×" }
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
        self.init(width: w, height: h)
    }

    public var description: String { "\(width)x\(height)" }

    /// Whether it fits inside `other` (both sides at most as large).
    public func fits(in other: PixelSize) -> Bool { width <= other.width && height <= other.height }
}

/// What a camera did with the controls it was given, as of its last start.
public struct CameraControlReport: Codable, Equatable, Sendable {
    /// The controls the camera was given (from the configuration).
    public var asked: CameraControls
    /// Controls asked for that this camera lacks, each with its reason.
    public var lacking: [LackingControl]
    /// The video size the pipeline granted at the last start; nil before one.
    public var videoSize: PixelSize?
    /// The still size it granted for the last still; nil before one.
    public var stillSize: PixelSize?
    /// The sensor's own HDR mode is on (`camera.hdr` `sensor`, set at the open).
    public var sensorHDR: Bool
    /// The still stream beside video as of the last video start; nil when none was asked.
    public var stillStream: StillStreamReport?
    /// The buffers the last video start allocated, per stream; nil before one (or
    /// for a camera that does not say, the simulated one).
    public var bufferMemory: BufferMemoryReport?
    /// How the video size came about when the camera granted none of the asked
    /// sizes ("the nearest of the sizes the camera lists"); nil when one was granted.
    public var videoSizeNote: String?

    public init(asked: CameraControls, lacking: [LackingControl] = [], videoSize: PixelSize? = nil,
                stillSize: PixelSize? = nil, sensorHDR: Bool = false, stillStream: StillStreamReport? = nil,
                bufferMemory: BufferMemoryReport? = nil, videoSizeNote: String? = nil) {
        self.asked = asked
        self.lacking = lacking
        self.videoSize = videoSize
        self.stillSize = stillSize
        self.sensorHDR = sensorHDR
        self.stillStream = stillStream
        self.bufferMemory = bufferMemory
        self.videoSizeNote = videoSizeNote
    }
}

/// The frame buffers a camera configuration holds, as libcamera allocated them
/// (count x bytes per stream): what a Raspberry Pi must find in its CMA area
/// (docs/control-and-api.md "Buffer memory (CMA)").
public struct BufferMemoryReport: Codable, Equatable, Sendable, CustomStringConvertible {
    public struct Stream: Codable, Equatable, Sendable {
        /// "video" or "still".
        public var role: String
        public var size: PixelSize
        public var count: Int
        public var bytesPerBuffer: Int
        public var bytes: Int { count * bytesPerBuffer }

        public init(role: String, size: PixelSize, count: Int, bytesPerBuffer: Int) {
            self.role = role
            self.size = size
            self.count = count
            self.bytesPerBuffer = bytesPerBuffer
        }

        enum CodingKeys: String, CodingKey { case role, size, count, bytesPerBuffer, bytes }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            role = try c.decode(String.self, forKey: .role)
            size = try c.decode(PixelSize.self, forKey: .size)
            count = try c.decode(Int.self, forKey: .count)
            bytesPerBuffer = try c.decode(Int.self, forKey: .bytesPerBuffer)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(role, forKey: .role)
            try c.encode(size, forKey: .size)
            try c.encode(count, forKey: .count)
            try c.encode(bytesPerBuffer, forKey: .bytesPerBuffer)
            try c.encode(bytes, forKey: .bytes)
        }
    }

    public var streams: [Stream]
    public var totalBytes: Int { streams.reduce(0) { $0 + $1.bytes } }

    public init(streams: [Stream]) { self.streams = streams }

    enum CodingKeys: String, CodingKey { case streams, totalBytes }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        streams = try c.decode([Stream].self, forKey: .streams)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(streams, forKey: .streams)
        try c.encode(totalBytes, forKey: .totalBytes)
    }

    /// "video 1920x1080 4 x 3.1 MB + still 4608x2592 4 x 17.9 MB = 84.1 MB"
    public var description: String {
        let parts = streams.map { "\($0.role) \($0.size) \($0.count) x \(Self.megabytes($0.bytesPerBuffer))" }
        return parts.joined(separator: " + ") + " = \(Self.megabytes(totalBytes))"
    }

    /// Bytes as MB (10^6) with one decimal.
    public static func megabytes(_ bytes: Int) -> String {
        let tenths = (bytes + 50_000) / 100_000
        return "\(tenths / 10).\(tenths % 10) MB"
    }
}

/// Whether the camera runs a still stream beside video (the `press` moment's
/// photo; docs/control-and-api.md "The moment of the press"), its size, or why not.
public struct StillStreamReport: Codable, Equatable, Sendable, CustomStringConvertible {
    public var granted: Bool
    public var size: PixelSize?
    /// Why there is none (a pipeline of one stream, no size keeping the video rate).
    public var reason: String?

    public init(granted size: PixelSize) {
        granted = true
        self.size = size
    }

    public init(notGranted reason: String) {
        granted = false
        self.reason = reason
    }

    public var description: String {
        if granted, let size { return "still stream \(size) beside video" }
        return "no still stream beside video (\(reason ?? "not granted")): a press photo is the video frame"
    }
}
