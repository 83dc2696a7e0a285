// SPDX-License-Identifier: BSD-2-Clause
/// The roles the service talks to. The real board (ShutterHardware) and the
/// simulated board (ShutterSim) both implement them, so the service runs
/// unchanged on a laptop.

public struct CameraInfo: Sendable, Equatable {
    public var make: String
    public var model: String
    public var id: String
    public var hasAutofocus: Bool
    public var pixelArraySize: (width: Int, height: Int)?

    public init(make: String, model: String, id: String, hasAutofocus: Bool,
                pixelArraySize: (width: Int, height: Int)? = nil) {
        self.make = make
        self.model = model
        self.id = id
        self.hasAutofocus = hasAutofocus
        self.pixelArraySize = pixelArraySize
    }

    public static func == (a: CameraInfo, b: CameraInfo) -> Bool {
        a.make == b.make && a.model == b.model && a.id == b.id && a.hasAutofocus == b.hasAutofocus
            && a.pixelArraySize?.width == b.pixelArraySize?.width
            && a.pixelArraySize?.height == b.pixelArraySize?.height
    }
}

public struct AutofocusResult: Sendable, Equatable {
    public var state: AutofocusState
    public var lensPosition: Double?
    /// True when the deadline passed and the last good (or hyperfocal) position was used.
    public var timedOut: Bool

    public init(state: AutofocusState, lensPosition: Double?, timedOut: Bool) {
        self.state = state
        self.lensPosition = lensPosition
        self.timedOut = timedOut
    }
}

public protocol CameraDevice: AnyObject, Sendable {
    var info: CameraInfo { get }
    /// Starts the video stream. Frames go to `sink`, on the camera's own queue, until
    /// `stop()` (then `sink.ended()`); a slow consumer loses frames (counted), the camera
    /// never waits for it.
    func start(into sink: FrameSink) async throws
    /// Frames that may wait for a slow consumer before the oldest is let go: kept below
    /// the camera's buffer count, so it never starves.
    var streamDepth: Int { get }
    func stop() async
    /// A full-resolution still, with the current exposure and focus.
    func captureStill() async throws -> Frame
    /// Starts an AF cycle (half-press) and returns its result, or the fallback
    /// position once `timeout` passes. Never hangs past the timeout.
    func autofocus(timeout: Duration) async -> AutofocusResult
    /// Frames dropped because the consumer was too slow.
    var droppedFrames: Int { get }
    /// The controls this camera was given and, as of its last start, those it
    /// lacks (each with its reason) and the sizes the pipeline granted.
    var controlReport: CameraControlReport { get }
    /// New controls (`shutterctl set`): for the running stream, if any, and every
    /// later start. Returns once `controlReport` shows them. The service calls it
    /// between captures only.
    func apply(_ controls: CameraControls) async
    /// The still stream the pipeline grants alongside video as of the last start
    /// (each video frame then carries its `companion`), or nil: one stream only.
    var stillStreamSize: PixelSize? { get }
}

extension CameraDevice {
    /// One stream unless a camera says otherwise.
    public var stillStreamSize: PixelSize? { nil }
}

public struct ButtonEdge: Sendable, Equatable {
    /// true = pressed (after active-low inversion).
    public var pressed: Bool
    public var time: MonotonicTime

    public init(pressed: Bool, time: MonotonicTime) {
        self.pressed = pressed
        self.time = time
    }
}

/// What a button delivers, in order.
public enum ButtonEvent: Sendable, Equatable {
    /// A raw edge with its kernel (monotonic) timestamp.
    case edge(ButtonEdge)
    /// Every edge the button saw before this time came ahead of this in the stream
    /// (the answer to `ButtonInput.catchUp()`).
    case caughtUp(MonotonicTime)
}

public protocol ButtonInput: Sendable {
    /// Raw edges, and the answers to `catchUp()`, to `sink` from the button's own queue
    /// (one consumer: a later call replaces the sink); the core's stability filter debounces.
    func deliver(to sink: @escaping ButtonSink)
    /// Asks for a `.caughtUp(now)` behind every edge the button has seen by now. A
    /// gesture deadline is decided on that answer, never on the clock alone, so an edge
    /// that reaches the service late (a loaded CPU) still counts before the decision
    /// its timestamp precedes.
    func catchUp()
    /// True when every edge the button has seen by now is already in its sink: none unread
    /// in the kernel, none being read. A due deadline is then decided at once, with no
    /// `catchUp` round trip; false (the default) when it cannot tell.
    var allEdgesDelivered: Bool { get }
    /// Edges dropped because the reader's queue was full (shown in `status`).
    var droppedEdges: Int { get }
}

extension ButtonInput {
    public var droppedEdges: Int { 0 }
    public var allEdgesDelivered: Bool { false }

    /// The events as a stream (a test's or a tool's consumer), keeping the oldest 256.
    public func events() -> AsyncStream<ButtonEvent> {
        let (stream, c) = AsyncStream.makeStream(of: ButtonEvent.self, bufferingPolicy: .bufferingOldest(256))
        deliver { e in
            if case .dropped = c.yield(e) { return false }
            return true
        }
        return stream
    }
}

extension CameraDevice {
    /// The frames as a stream that keeps the newest `streamDepth` (tests and tools).
    public func start() async throws -> AsyncStream<Frame> {
        let (sink, stream) = FrameSink.stream(depth: streamDepth)
        try await start(into: sink)
        return stream
    }
}

public protocol LEDOutput: Sendable {
    var name: String { get }
    func set(_ on: Bool) throws
    /// The level last written successfully (false before the first write, and
    /// after a failed write still the level before it): what `status` reports.
    var isOn: Bool { get }
}

public protocol Microphone: Sendable {
    func start(sampleRate: Int, channels: Int) throws -> AsyncStream<AudioChunk>
    func stop()
    var overruns: Int { get }
}
