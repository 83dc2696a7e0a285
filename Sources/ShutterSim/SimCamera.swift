import Foundation
import ShutterCore
import Synchronization

/// The simulated camera: real I420 frames of a moving test pattern, paced in real
/// time on CLOCK_MONOTONIC, full-size stills on request, autofocus that takes a
/// set time, a light level a test can set, and faults a test can inject.
public final class SimCamera: CameraDevice {
    public struct Settings: Sendable {
        public var width = 1920
        public var height = 1080
        public var fps = 30
        public var stillWidth = 4608
        public var stillHeight = 2592
        /// How long autofocus takes to converge.
        public var autofocusMs: Int64 = 120
        /// Whether it converges (Focused) or not (Failed).
        public var autofocusSucceeds = true
        public var model = "Shutter Sim Camera"

        public init() {}
    }

    public enum Fault: String, Sendable, CaseIterable {
        case none
        /// Frames stop arriving (the stream stays open): the watchdog's case.
        case stall
        /// The camera is gone: the stream ends, start() and stills fail with noDevice.
        case disappear
        /// Stills and start() fail with an error.
        case error
    }

    private struct State {
        var fault: Fault = .none
        var lux: Double = 400
        var running = false
        var generation: UInt64 = 0
        var continuation: AsyncStream<Frame>.Continuation?
        var dropped = 0
        var delivered: UInt64 = 0
        var freeBuffers: [OwnedFrameBuffer] = []
        var stillBuffers: [OwnedFrameBuffer] = []
    }

    public let settings: Settings
    public let info: CameraInfo
    private let clock: any MonotonicClock
    private let state = Mutex(State())
    private let pattern: TestPattern
    private let stillPattern: TestPattern

    public init(settings: Settings = Settings(), clock: any MonotonicClock = SystemClock()) {
        self.settings = settings
        self.clock = clock
        info = CameraInfo(make: "Shutter", model: settings.model, id: "sim:0", hasAutofocus: true,
                          pixelArraySize: (settings.stillWidth, settings.stillHeight))
        pattern = TestPattern(width: settings.width, height: settings.height)
        stillPattern = TestPattern(width: settings.stillWidth, height: settings.stillHeight)
    }

    // MARK: Test controls

    public var fault: Fault {
        get { state.withLock { $0.fault } }
        set {
            let ended: AsyncStream<Frame>.Continuation? = state.withLock { s in
                s.fault = newValue
                guard newValue == .disappear else { return nil }
                s.running = false
                s.generation += 1
                defer { s.continuation = nil }
                return s.continuation
            }
            ended?.finish()
        }
    }

    /// Scene brightness in lux: sets exposure, gain and the picture's brightness.
    public var lux: Double {
        get { state.withLock { $0.lux } }
        set { state.withLock { $0.lux = max(0, newValue) } }
    }

    public var droppedFrames: Int { state.withLock { $0.dropped } }
    public var deliveredFrames: UInt64 { state.withLock { $0.delivered } }

    /// What an auto-exposure loop would settle on for `lux`: longer exposure and
    /// more gain as the scene darkens, capped at 1/30 s and 16x.
    static func exposure(forLux lux: Double) -> FrameMetadata {
        let target = 1_000_000.0 / max(lux, 0.1)  // microseconds at gain 1: 1/400 s at 400 lux
        let exposure = min(33_000, max(100, target))
        let gain = min(16, max(1, target / exposure))
        return FrameMetadata(exposureTimeMicroseconds: Int(exposure), analogueGain: gain, digitalGain: 1,
                             lux: lux, colourTemperature: 5000)
    }

    // MARK: CameraDevice

    public func start() async throws -> AsyncStream<Frame> {
        let (stream, continuation) = AsyncStream<Frame>.makeStream(bufferingPolicy: .bufferingNewest(4))
        let generation: UInt64 = try state.withLock { s in
            switch s.fault {
            case .disappear: throw CameraError(.noDevice, "simulated camera is unplugged (fault injected)")
            case .error: throw CameraError(.system, "simulated camera failed to start (fault injected)")
            case .none, .stall: break
            }
            s.continuation?.finish()
            s.continuation = continuation
            s.running = true
            s.generation += 1
            if s.freeBuffers.isEmpty {
                let size = Frame.i420ByteCount(width: settings.width, height: settings.height)
                s.freeBuffers = (0..<8).map { _ in OwnedFrameBuffer(capacity: size) }
            }
            return s.generation
        }
        let thread = Thread { [self] in runFrameLoop(generation: generation) }
        thread.name = "sim-camera"
        thread.start()
        return stream
    }

    public func stop() async {
        let c: AsyncStream<Frame>.Continuation? = state.withLock { s in
            s.running = false
            s.generation += 1
            defer { s.continuation = nil }
            return s.continuation
        }
        c?.finish()
    }

    public func captureStill() async throws -> Frame {
        let (buffer, lux): (OwnedFrameBuffer, Double) = try state.withLock { s in
            switch s.fault {
            case .disappear: throw CameraError(.noDevice, "simulated camera is unplugged (fault injected)")
            case .error: throw CameraError(.system, "simulated still capture failed (fault injected)")
            case .stall: throw CameraError(.timeout, "simulated camera is stalled (fault injected)")
            case .none: break
            }
            let b = s.stillBuffers.popLast()
                ?? OwnedFrameBuffer(capacity: Frame.i420ByteCount(width: settings.stillWidth, height: settings.stillHeight))
            return (b, s.lux)
        }
        let now = clock.now()
        let brightness = min(1, max(0.05, lux / 200))
        stillPattern.draw(into: buffer.bytes, index: 0, millis: now.milliseconds, brightness: brightness)
        var meta = Self.exposure(forLux: lux)
        meta.autofocusState = settings.autofocusSucceeds ? .focused : .failed
        meta.lensPosition = 1.0
        return Frame.i420(width: settings.stillWidth, height: settings.stillHeight, buffer: buffer, timestamp: now,
                          sequence: 0, metadata: meta, onRelease: { [weak self] in
                              self?.state.withLock { $0.stillBuffers.append(buffer) }
                          })
    }

    public func autofocus(timeout: Duration) async -> AutofocusResult {
        let converge = Duration.milliseconds(settings.autofocusMs)
        let wait = min(converge, timeout)
        try? await clock.sleep(for: wait)
        if converge > timeout {
            return AutofocusResult(state: .failed, lensPosition: 0.5, timedOut: true)  // hyperfocal-ish
        }
        return AutofocusResult(state: settings.autofocusSucceeds ? .focused : .failed,
                               lensPosition: settings.autofocusSucceeds ? 1.0 : 0.5, timedOut: false)
    }

    // MARK: Frame loop (its own thread: drawing 1080p is blocking work)

    private func runFrameLoop(generation: UInt64) {
        let period = Int64(1_000_000_000 / max(settings.fps, 1))
        let origin = SystemClock().now().nanoseconds
        var index: UInt64 = 0
        while true {
            let due = origin + Int64(index) * period
            var ts = timespec(tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
            enum Next { case quit, skip, frame(OwnedFrameBuffer?, Double, AsyncStream<Frame>.Continuation) }
            let next: Next = state.withLock { s in
                guard s.running, s.generation == generation, let c = s.continuation else { return .quit }
                if s.fault == .stall { return .skip }
                let b = s.freeBuffers.popLast()
                if b == nil { s.dropped += 1 }
                return .frame(b, s.lux, c)
            }
            switch next {
            case .quit: return
            case .skip: break
            case let .frame(buffer, lux, continuation):
                guard let buffer else { break }
                let timestamp = MonotonicTime(nanoseconds: due)
                pattern.draw(into: buffer.bytes, index: index, millis: timestamp.milliseconds,
                             brightness: min(1, max(0.05, lux / 200)))
                var meta = Self.exposure(forLux: lux)
                meta.autofocusState = .focused
                meta.lensPosition = 1.0
                let frame = Frame.i420(width: settings.width, height: settings.height, buffer: buffer,
                                       timestamp: timestamp, sequence: index, metadata: meta,
                                       onRelease: { [weak self] in
                                           self?.state.withLock { $0.freeBuffers.append(buffer) }
                                       })
                switch continuation.yield(frame) {
                case .dropped: state.withLock { $0.dropped += 1 }
                case .enqueued: state.withLock { $0.delivered += 1 }
                case .terminated: return
                @unknown default: break
                }
            }
            index += 1
        }
    }
}
