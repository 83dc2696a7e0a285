// SPDX-License-Identifier: BSD-2-Clause
import Dispatch
import ShutterCore
import Synchronization

/// The simulated camera: real I420 frames of a moving test pattern, paced by the
/// injected clock (timestamps on its timeline), full-size stills that switch the
/// camera's mode as a Pi does, autofocus that takes a set time, a light level a
/// test can set, and faults a test can inject.
///
/// Around a still it behaves like `LibcameraCamera`: video stops, the camera is
/// reconfigured and started for the full-resolution still (the first half of
/// `modeSwitchMs`: stop, configure, start, warm-up frames), the still is exposed,
/// and the camera is reconfigured and started for video (the second half) before
/// `captureStill()` returns. The video stream stays open across the switch and
/// resumes `modeSwitchMs` after the still began: its timestamps jump by that
/// plus the time since the last frame (under one frame period), and its
/// sequence numbers by the sensor slots in between. Stills, and a `start()` arriving during one, are served
/// one at a time in arrival order, like the real camera's control queue; a
/// still runs to its end even if its caller is cancelled. `stop()` ends the
/// stream at once; a still in flight still completes, and video stays off.
///
/// Timestamps follow the Pi's SensorTimestamp: a frame is stamped (and
/// delivered) at its slot, `origin + k / fps`, which is when its exposure
/// ended; its exposure began `ExposureTime` earlier (`Frame.exposureStart`).
/// The burned-in time is that exposure start. With `stillStream` set, the
/// pipeline grants a second, larger stream alongside video, as libcamera's
/// Raspberry Pi pipeline does: each video frame carries the still-stream
/// frame of the same sensor frame (`Frame.companion`, same number and time).
public final class SimCamera: CameraDevice {
    public struct Settings: Sendable {
        public var width = 1920
        public var height = 1080
        public var fps = 30
        public var stillWidth = 4608
        public var stillHeight = 2592
        /// How long autofocus takes to converge (on video frames: not during a mode switch).
        public var autofocusMs: Int64 = 120
        /// Whether it converges (Focused) or not (Failed).
        public var autofocusSucceeds = true
        /// The switch from video to a still and back, as a Pi takes (~0.5 s): the
        /// still is exposed halfway, video resumes at the end. 0 = instant.
        public var modeSwitchMs: Int64 = 500
        /// The still stream granted alongside video (`sim.stillStream`), or nil:
        /// one stream only, as vimc and most USB cameras.
        public var stillStream: PixelSize?
        /// Frames the stream holds for a slow consumer before dropping the oldest.
        public var streamDepth = 4
        /// Video buffers, like libcamera's: a frame held downstream (a ring, an
        /// encoder queue) keeps its buffer; with none free a frame is lost. At
        /// least `streamDepth + 1`.
        public var bufferCount = 8
        public var model = "Shutter Sim Camera"
        /// Its libcamera-like id; the board numbers its cameras "sim:0", "sim:1", ...
        public var id = "sim:0"
        /// Video and still sizes asked for, best first; empty = `width` x `height`
        /// (`stillWidth` x `stillHeight`). The camera grants the first that fits
        /// `maxSize` (`SizePreference.grant`); `width`/`height` become what it granted.
        public var videoSizes: [PixelSize] = []
        public var stillSizes: [PixelSize] = []
        /// The largest size this camera gives, video and still; nil = any.
        public var maxSize: PixelSize?
        /// Set: the camera is listed but `start()` fails with this reason (a
        /// loose ribbon cable), every time.
        public var brokenReason: String?
        /// The sensor controls it starts with (the configuration's `camera.*`);
        /// `apply` changes them. The picture and the frame metadata follow them
        /// (`SimScene`, `SimOptics`), and `controlReport` reports them.
        public var controls = CameraControls()
        /// What it looks at: luminance, colour temperature, subject distance.
        public var scene = SimScene()
        /// Auto exposure and continuous autofocus frames a still's mode switch
        /// gives them to converge (the warm-up frames).
        public var stillWarmUpFrames = 8
        /// Controls this camera lacks (for tests): asked for, each is reported
        /// with its reason at every start, as the real camera reports its own.
        public var lacking: Set<CameraControlID> = []
        /// Its sensor has an HDR mode switched at open (Camera Module 3's
        /// imx708); `camera.hdr` `sensor` is reported lacking on one without.
        public var sensorHDR = false
        /// Opened with the sensor's HDR mode on: the largest size becomes the
        /// HDR mode's (`SimCamera.hdrModeSize`), as imx708 has one HDR mode.
        public var sensorHDROn = false
        /// How long `start()` takes before the first frame (a slow sensor).
        public var startDelayMs: Int64 = 0

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

    private enum Mode: Equatable {
        case idle
        case video
        /// A still's switch; `backToVideo`: video was streaming and resumes after it
        /// (after the last of several stills queued back to back).
        case switching(backToVideo: Bool)
    }

    private struct Waiter {
        let id: UInt64
        let isStill: Bool
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var fault: Fault = .none
        /// Stills whose exposure began with the flash lit.
        var stillsLit = 0
        var scene: SimScene
        var optics: SimOptics
        var mode: Mode = .idle
        /// start() was called and stop() was not: video runs, or resumes after a still.
        var videoWanted = false
        /// Bumped whenever video stops; a producer of an older generation delivers nothing.
        var generation: UInt64 = 0
        var stream: SimFrameOutput?
        var producer: Task<Void, Never>?
        var lastSequence: UInt64?
        var lastFrameTime: MonotonicTime?
        /// Set when video resumes after a still: the last frame before the switch.
        var gapFrom: MonotonicTime?
        var dropped = 0
        var outOfBuffers = 0
        var delivered: UInt64 = 0
        var freeBuffers: [OwnedFrameBuffer] = []
        var buffersAllocated = false
        var stillBuffers: [OwnedFrameBuffer] = []
        /// The still stream's buffers, one per video buffer (a request holds both).
        var streamBuffers: [OwnedFrameBuffer] = []
        /// The control queue: one still (or start) at a time, the others wait in order.
        var controlBusy = false
        var controlWaiters: [Waiter] = []
        /// When the switch in progress ends (autofocus waits for video to return).
        var switchEnds: MonotonicTime?
        var modeSwitches = 0
        var stills = 0
        var lastVideoGap: Duration?
        /// What the last start reported (`controlReport`).
        var lackingAtStart: [LackingControl] = []
        /// The controls in use: `settings.controls`, then each `apply`.
        var controls: CameraControls
        var controlChanges = 0
        var videoStarted = false

        var isSwitching: Bool {
            if case .switching = mode { return true }
            return false
        }

        /// Passes the control queue to the next waiter (marked busy at once, so a
        /// settle never sees a gap), or frees it. The caller resumes the result.
        mutating func handOver(_ activity: SimActivity) -> CheckedContinuation<Void, Never>? {
            guard !controlWaiters.isEmpty else {
                controlBusy = false
                return nil
            }
            let w = controlWaiters.removeFirst()
            activity.set(w.id, .busy)
            return w.continuation
        }
    }

    public let settings: Settings
    public let info: CameraInfo
    private let clock: any MonotonicClock
    private let activity: SimActivity
    private let state: Mutex<State>
    private let pattern: TestPattern
    private let stillPattern: TestPattern
    private let streamPattern: TestPattern?
    /// Drawing a picture is blocking work: it runs here, not on the shared task pool.
    private let drawQueue = DispatchQueue(label: "shutter.sim.camera")

    /// imx708's one HDR mode.
    public static let hdrModeSize = PixelSize(width: 2304, height: 1296)

    /// The board's flash, when it has one: a still records whether it lit the exposure.
    private let flash: SimLED?

    public init(settings asked: Settings = Settings(), clock: any MonotonicClock = SystemClock(), flash: SimLED? = nil) {
        self.flash = flash
        var settings = asked
        var largest = asked.maxSize
        if asked.sensorHDROn {
            let m = Self.hdrModeSize
            largest = PixelSize(width: min(largest?.width ?? m.width, m.width), height: min(largest?.height ?? m.height, m.height))
        }
        let video = SizePreference.grant(asked.videoSizes.isEmpty ? [PixelSize(width: asked.width, height: asked.height)]
                                         : asked.videoSizes, largest: largest)
        let still = SizePreference.grant(asked.stillSizes.isEmpty
                                         ? [PixelSize(width: asked.stillWidth, height: asked.stillHeight)]
                                         : asked.stillSizes, largest: largest)
        (settings.width, settings.height) = (video.width, video.height)
        (settings.stillWidth, settings.stillHeight) = (still.width, still.height)
        self.settings = settings
        self.clock = clock
        activity = SimActivity(clock: clock)
        state = Mutex(State(scene: settings.scene, optics: SimOptics(lens: settings.scene.subjectDioptres),
                            controls: settings.controls))
        info = CameraInfo(make: "Shutter", model: settings.model, id: settings.id, hasAutofocus: true,
                          pixelArraySize: (settings.stillWidth, settings.stillHeight))
        pattern = TestPattern(width: settings.width, height: settings.height)
        stillPattern = TestPattern(width: settings.stillWidth, height: settings.stillHeight)
        streamPattern = settings.stillStream.map { TestPattern(width: $0.width, height: $0.height) }
    }

    /// The still stream granted alongside video, from the first start (a
    /// simulated pipeline grants what it is told to).
    public var stillStreamSize: PixelSize? { state.withLock { $0.videoStarted } ? settings.stillStream : nil }

    // MARK: Test controls

    /// Stills whose exposure began with the board's flash lit.
    public var stillsLit: Int { state.withLock { $0.stillsLit } }

    public var fault: Fault {
        get { state.withLock { $0.fault } }
        set {
            let (stream, producer): (SimFrameOutput?, Task<Void, Never>?) = state.withLock { s in
                s.fault = newValue
                guard newValue == .disappear else { return (nil, nil) }
                s.videoWanted = false
                s.generation += 1
                if s.mode == .video { s.mode = .idle }
                defer {
                    s.stream = nil
                    s.producer = nil
                }
                return (s.stream, s.producer)
            }
            producer?.cancel()
            stream?.finish()
        }
    }

    /// Scene brightness in lux: auto exposure follows it (and the picture
    /// darkens once exposure and gain are at their limits).
    public var lux: Double {
        get { state.withLock { $0.scene.lux } }
        set { state.withLock { $0.scene.lux = max(0, newValue) } }
    }

    /// The scene: luminance, colour temperature, subject distance.
    public var scene: SimScene {
        get { state.withLock { $0.scene } }
        set { state.withLock { $0.scene = newValue } }
    }

    /// Frames lost: not drawn because every buffer was still held downstream, or
    /// pushed out of a full stream by newer ones.
    public var droppedFrames: Int { state.withLock { $0.dropped } }
    /// Of `droppedFrames`, those not drawn because every buffer (`bufferCount`)
    /// was still held by the consumer (a frame ring, an encoder queue).
    public var framesLostForBuffers: Int { state.withLock { $0.outOfBuffers } }
    public var deliveredFrames: UInt64 { state.withLock { $0.delivered } }
    /// Stills that stopped the video stream to switch modes.
    public var modeSwitches: Int { state.withLock { $0.modeSwitches } }
    /// Whether a still's mode switch is under way (no video frames meanwhile).
    public var isSwitchingModes: Bool { state.withLock { $0.isSwitching } }
    /// Stills waiting for the still in progress: presses that arrived during a switch.
    public var stillsWaiting: Int { state.withLock { s in s.controlWaiters.filter(\.isStill).count } }
    /// Stills and starts waiting for the one in progress.
    var controlQueueLength: Int { state.withLock { $0.controlWaiters.count } }
    /// Stills delivered.
    public var stillsCaptured: Int { state.withLock { $0.stills } }
    /// The last video gap a still caused: from the last frame before the switch
    /// to the first frame after it (`modeSwitchMs`, plus the time from that frame
    /// to the still's start, plus `modeSwitchMs` per still queued back to back).
    /// Nil until video has resumed after a still.
    public var lastVideoGap: Duration? { state.withLock { $0.lastVideoGap } }

    /// The controls it was given; from its first start, those it lacks (the
    /// asked-for ones in `settings.lacking`) and the sizes it delivers.
    public var controlReport: CameraControlReport {
        state.withLock { s in
            CameraControlReport(asked: s.controls, lacking: s.lackingAtStart,
                                videoSize: s.videoStarted ? PixelSize(width: settings.width, height: settings.height) : nil,
                                stillSize: s.stills > 0 ? PixelSize(width: settings.stillWidth, height: settings.stillHeight) : nil,
                                sensorHDR: settings.sensorHDROn,
                                stillStream: s.videoStarted ? settings.stillStream.map(StillStreamReport.init(granted:)) : nil)
        }
    }

    /// The asked-for controls this camera lacks, in the vocabulary's order.
    private func lacking(_ controls: CameraControls) -> [LackingControl] {
        controls.requestedControls.compactMap { id in
            if settings.lacking.contains(id) { return LackingControl(id) }
            guard id == "HdrMode", controls.hdr == .sensor, !settings.sensorHDROn else { return nil }
            return LackingControl(id, reason: settings.sensorHDR
                ? "the camera was opened without sensor HDR, which is switched before the open; "
                    + "`shutterctl set camera.hdr sensor` restarts the camera for it"
                : "this camera's sensor has no HDR mode (simulated: its sim.cameras entry has no \"sensorHdr\": true); "
                    + "use \"single-exp\" where the camera has it")
        }
    }

    /// What a frame reports: the optics' metadata, and the metering it did
    /// (the window, which it honours, else the mode) unless told it lacks it.
    private func metadata(_ s: State, autofocusSucceeds: Bool) -> FrameMetadata {
        var m = s.optics.metadata(s.controls, s.scene, autofocusSucceeds: autofocusSucceeds)
        if !settings.lacking.contains("AeMeteringMode") {
            m.metering = MeteringInEffect(s.controls, honoursWindow: !settings.lacking.contains("AeMeteringWindow"))
        }
        return m
    }

    /// Keeps the new controls, reported at once (as the real camera sets them
    /// on the running stream) and at every later start.
    public func apply(_ controls: CameraControls) async {
        state.withLock { s in
            s.controls = controls
            s.controlChanges += 1
            if s.videoStarted { s.lackingAtStart = lacking(controls) }
        }
    }

    /// How many times `apply` was called: a test sees a change reach the camera, or wait.
    public var controlChanges: Int { state.withLock { $0.controlChanges } }

    // MARK: Driving it on a ManualClock

    /// Returns once the camera's own work (the frame producer, a still's mode
    /// switch, an autofocus cycle) is asleep on the clock or queued behind a
    /// still, so that only advancing the clock moves it. With `consumers`, also
    /// waits until the frame stream's consumer has taken every frame and is
    /// waiting for the next (or has gone): a consumer that stops reading keeps
    /// this waiting.
    public func settle(consumers: Bool = false) async {
        await activity.wait { isSettled(consumers: consumers) }
    }

    func isSettled(consumers: Bool) -> Bool {
        guard activity.isQuiet else { return false }
        guard consumers else { return true }
        return state.withLock { $0.stream }?.consumerCaughtUp ?? true
    }

    // MARK: CameraDevice

    public var streamDepth: Int { settings.streamDepth }

    /// Frames into the sim's own stream, which knows when its consumer has caught up
    /// (`SimBoard.settle(consumers:)`).
    public func start() async throws -> AsyncStream<Frame> {
        let stream = SimStream<Frame>(depth: settings.streamDepth, onChange: { [activity] in activity.changed() })
        try await start(.stream(stream))
        return stream.makeStream()
    }

    public func start(into sink: FrameSink) async throws {
        try await start(.sink(sink))
    }

    private func start(_ stream: SimFrameOutput) async throws {
        let id = activity.begin(call: true)
        defer { activity.end(id) }
        if settings.startDelayMs > 0 { try? await activity.sleep(id, until: clock.now() + .milliseconds(settings.startDelayMs)) }
        await acquireControl(id, isStill: false)
        defer { releaseControl() }
        let (old, oldProducer): (SimFrameOutput?, Task<Void, Never>?) = try state.withLock { s in
            if let reason = settings.brokenReason { throw CameraError(.system, reason) }
            switch s.fault {
            case .disappear: throw CameraError(.noDevice, "simulated camera is unplugged (fault injected)")
            case .error: throw CameraError(.system, "simulated camera failed to start (fault injected)")
            case .none, .stall: break
            }
            let old = (s.stream, s.producer)
            s.stream = stream
            s.videoWanted = true
            s.videoStarted = true
            s.lackingAtStart = lacking(s.controls)
            if !s.buffersAllocated {  // once: buffers held downstream come back to the pool
                s.buffersAllocated = true
                let size = Frame.i420ByteCount(width: settings.width, height: settings.height)
                let count = max(settings.bufferCount, settings.streamDepth + 1)
                s.freeBuffers = (0..<count).map { _ in OwnedFrameBuffer(capacity: size) }
                if let still = settings.stillStream {
                    let stillSize = Frame.i420ByteCount(width: still.width, height: still.height)
                    s.streamBuffers = (0..<count).map { _ in OwnedFrameBuffer(capacity: stillSize) }
                }
            }
            // A fresh start counts frames from 0, as libcamera's sequence does.
            startVideo(&s, origin: clock.now(), firstSequence: 0)
            return old
        }
        oldProducer?.cancel()
        old?.finish()
    }

    public func stop() async {
        let (stream, producer): (SimFrameOutput?, Task<Void, Never>?) = state.withLock { s in
            s.videoWanted = false
            s.generation += 1
            if s.mode == .video { s.mode = .idle }  // a switch in flight leaves video off at its end
            defer {
                s.stream = nil
                s.producer = nil
            }
            return (s.stream, s.producer)
        }
        producer?.cancel()
        stream?.finish()
    }

    public func captureStill() async throws -> Frame {
        let id = activity.begin(call: true)
        // Its own task: like the real camera's control queue, a switch runs to
        // its end (video restored) even when the caller is cancelled.
        let work = Task { [self] in try await switchForStill(id: id) }
        return try await work.value
    }

    public func autofocus(timeout: Duration) async -> AutofocusResult {
        let id = activity.begin(call: true)
        defer { activity.end(id) }
        let now = clock.now()
        let deadline = now + timeout
        // AF converges on video frames; none arrive while a still switches modes,
        // nor during the switches of stills queued behind it (known at the start).
        let switchEnds: MonotonicTime? = state.withLock { s in
            guard s.isSwitching, let ends = s.switchEnds else { return nil }
            let queued = Int64(s.controlWaiters.filter(\.isStill).count)
            return ends + .milliseconds(max(0, settings.modeSwitchMs) * queued)
        }
        let from = max(now, switchEnds ?? now)
        let converged = from + .milliseconds(settings.autofocusMs)
        let fallback = AutofocusResult(state: .failed, lensPosition: 0.5, timedOut: true)  // hyperfocal-ish
        do {
            try await activity.sleep(id, until: min(converged, deadline))
        } catch {
            return fallback
        }
        if converged > deadline { return fallback }
        // The lens ends on the subject (and, in `auto` mode, stays there).
        let subject: Double = state.withLock { s in
            guard settings.autofocusSucceeds else { return s.scene.subjectDioptres }
            s.optics.autofocused = true
            s.optics.lens = s.scene.subjectDioptres
            return s.scene.subjectDioptres
        }
        return AutofocusResult(state: settings.autofocusSucceeds ? .focused : .failed,
                               lensPosition: settings.autofocusSucceeds ? subject : 0.5, timedOut: false)
    }

    // MARK: The still's mode switch

    private func switchForStill(id: UInt64) async throws -> Frame {
        defer { activity.end(id) }
        await acquireControl(id, isStill: true)
        let start = clock.now()
        let full = Duration.milliseconds(max(0, settings.modeSwitchMs))
        let exposed = start + .nanoseconds(full.nanoseconds / 2)
        let resumes = start + full
        let lit = flash?.isOn ?? false
        // Stop video: no frame from here until the switch back.
        let (begun, refusedNext): (Result<(Bool, Task<Void, Never>?), CameraError>, CheckedContinuation<Void, Never>?) =
            state.withLock { s in
                let refusal: CameraError? = switch s.fault {
                case .disappear: CameraError(.noDevice, "simulated camera is unplugged (fault injected)")
                case .error: CameraError(.system, "simulated still capture failed (fault injected)")
                case .stall: CameraError(.timeout, "simulated camera is stalled (fault injected)")
                case .none: nil
                }
                if let refusal {
                    // Refused without a switch; one left unfinished by the still before ends here.
                    guard case .switching(let back) = s.mode else { return (.failure(refusal), s.handOver(activity)) }
                    return (.failure(refusal), endSwitch(&s, at: start, backToVideo: back))
                }
                let wasVideo: Bool = switch s.mode {
                case .video: true
                case .switching(let back): back
                case .idle: false
                }
                s.mode = .switching(backToVideo: wasVideo)
                if lit { s.stillsLit += 1 }
                s.generation += 1
                s.switchEnds = wasVideo ? resumes : exposed
                if wasVideo { s.modeSwitches += 1 }
                defer { s.producer = nil }
                return (.success((wasVideo, s.producer)), nil)
            }
        refusedNext?.resume()
        let (wasVideo, producer) = try begun.get()
        producer?.cancel()
        // First half: stop, configure for the still, start, warm up; then the exposure.
        try? await activity.sleep(id, until: exposed)
        let still: Result<Frame, CameraError> = await exposeStill(at: exposed)
        // Second half: stop, configure for video, start. Not when the camera is gone.
        if wasVideo && fault != .disappear {
            try? await activity.sleep(id, until: resumes)
        }
        let next: CheckedContinuation<Void, Never>? = state.withLock { s in
            if case .success = still { s.stills += 1 }
            s.lackingAtStart = lacking(s.controls)
            return endSwitch(&s, at: resumes, backToVideo: wasVideo)
        }
        next?.resume()
        return try still.get()
    }

    /// Ends a switch at `time`: video resumes (when it was streaming, is still
    /// wanted and the camera is there), and the control queue passes on.
    private func endSwitch(_ s: inout State, at time: MonotonicTime, backToVideo: Bool)
        -> CheckedContinuation<Void, Never>? {
        s.switchEnds = nil
        let back = backToVideo && s.videoWanted && s.fault != .disappear && s.isSwitching
        if back, s.controlWaiters.first?.isStill == true {
            // Another still is queued: video is started and stopped again at
            // once, before any frame arrives. It resumes after that still.
            s.mode = .switching(backToVideo: true)
            s.switchEnds = time + .milliseconds(max(0, settings.modeSwitchMs))
        } else if back {
            // The sensor's frame slots went on during the switch: the sequence jumps with the time.
            let period = 1_000_000_000 / Int64(max(settings.fps, 1))
            var next = (s.lastSequence ?? 0) &+ 1
            if let last = s.lastFrameTime {
                let slots = ((time - last).nanoseconds + period / 2) / max(period, 1)
                next = (s.lastSequence ?? 0) &+ UInt64(max(1, slots))
            }
            s.gapFrom = s.lastFrameTime
            startVideo(&s, origin: time, firstSequence: next)
        } else if s.isSwitching {
            s.mode = .idle
        }
        return s.handOver(activity)
    }

    /// The full-resolution frame, exposed at `time`; a fault injected during the
    /// switch fails it as the real camera would (gone, failed, or no frame).
    private func exposeStill(at time: MonotonicTime) async -> Result<Frame, CameraError> {
        let taken: Result<(OwnedFrameBuffer, SimRender, FrameMetadata), CameraError> = state.withLock { s in
            switch s.fault {
            case .disappear:
                return .failure(CameraError(.noDevice, "simulated camera was unplugged during a still (fault injected)"))
            case .error: return .failure(CameraError(.system, "simulated still capture failed (fault injected)"))
            case .stall: return .failure(CameraError(.timeout, "no still frame: simulated camera is stalled (fault injected)"))
            case .none: break
            }
            let b = s.stillBuffers.popLast()
                ?? OwnedFrameBuffer(capacity: Frame.i420ByteCount(width: settings.stillWidth, height: settings.stillHeight))
            // The warm-up frames of the switch: exposure and focus settle.
            for _ in 0..<max(1, settings.stillWarmUpFrames) { s.optics.step(s.controls, s.scene) }
            return .success((b, s.optics.render(s.controls, s.scene),
                             metadata(s, autofocusSucceeds: settings.autofocusSucceeds)))
        }
        let buffer: OwnedFrameBuffer, render: SimRender, meta: FrameMetadata
        switch taken {
        case .failure(let e): return .failure(e)
        case .success(let t): (buffer, render, meta) = t
        }
        let stillPattern = self.stillPattern
        await onDrawQueue {
            stillPattern.draw(into: buffer.bytes, index: 0, millis: time.milliseconds, render: render)
        }
        // Exposed from `time`: stamped at the exposure's end, as the Pi stamps its frames.
        let stamp = time + .microseconds(meta.exposureTimeMicroseconds ?? 0)
        return .success(Frame.i420(width: settings.stillWidth, height: settings.stillHeight, buffer: buffer,
                                   timestamp: stamp, sequence: 0, metadata: meta, onRelease: { [weak self] in
                                       self?.state.withLock { $0.stillBuffers.append(buffer) }
                                   }))
    }

    private func acquireControl(_ id: UInt64, isStill: Bool) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let granted: Bool = state.withLock { s in
                if !s.controlBusy {
                    s.controlBusy = true
                    return true
                }
                activity.set(id, .blocked)
                s.controlWaiters.append(Waiter(id: id, isStill: isStill, continuation: c))
                return false
            }
            if granted { c.resume() }
        }
    }

    private func releaseControl() {
        state.withLock { $0.handOver(activity) }?.resume()
    }

    // MARK: Video

    /// Starts a producer for a new generation, its first frame at `origin`.
    private func startVideo(_ s: inout State, origin: MonotonicTime, firstSequence: UInt64) {
        s.mode = .video
        s.generation += 1
        let generation = s.generation
        let id = activity.begin()
        s.producer = Task { [self] in
            await produceVideo(id: id, generation: generation, origin: origin, firstSequence: firstSequence)
        }
    }

    /// Frame k is due at `origin + k / fps` exactly (no rounding drift) and is
    /// stamped with that time, on the injected clock: the end of its exposure.
    /// As libcamera does (FrameDurationLimits), a frame lasts at least its exposure: after
    /// one exposed longer than the period, the next is due that exposure later (a 4 s
    /// shutter gives a frame every 4 s), and the slots go on from there.
    private func produceVideo(id: UInt64, generation: UInt64, origin start: MonotonicTime, firstSequence: UInt64) async {
        defer { activity.end(id) }
        let fps = Int64(max(settings.fps, 1))
        let period = 1_000_000_000 / fps
        var origin = start
        var k: Int64 = 0
        var nextSequence = firstSequence
        while true {
            let due = MonotonicTime(nanoseconds: origin.nanoseconds + k * 1_000_000_000 / fps)
            let sequence = nextSequence
            nextSequence &+= 1
            k += 1
            do { try await activity.sleep(id, until: due) } catch { return }
            enum Next { case quit, skip, frame(OwnedFrameBuffer, OwnedFrameBuffer?, SimRender, FrameMetadata) }
            let next: Next = state.withLock { s in
                guard s.generation == generation, s.mode == .video, s.stream != nil else { return .quit }
                if s.fault == .stall { return .skip }
                // A request holds a buffer of each stream: with either pool empty, the frame is lost.
                guard !s.freeBuffers.isEmpty, settings.stillStream == nil || !s.streamBuffers.isEmpty else {
                    s.dropped += 1
                    s.outOfBuffers += 1
                    return .skip
                }
                let b = s.freeBuffers.removeLast()
                let still = settings.stillStream == nil ? nil : s.streamBuffers.removeLast()
                s.optics.step(s.controls, s.scene)
                return .frame(b, still, s.optics.render(s.controls, s.scene),
                              metadata(s, autofocusSucceeds: true))
            }
            guard case let .frame(buffer, stillBuffer, render, meta) = next else {
                if case .quit = next { return }
                continue
            }
            // The exposure ended at the slot; it began ExposureTime earlier: the time burned in.
            let exposed = due - .microseconds(meta.exposureTimeMicroseconds ?? 0)
            if let us = meta.exposureTimeMicroseconds, Int64(us) * 1000 > period {
                origin = due + .microseconds(Int64(us))
                k = 0
            }
            let pattern = self.pattern, streamPattern = self.streamPattern
            await onDrawQueue {
                pattern.draw(into: buffer.bytes, index: sequence, millis: exposed.milliseconds, render: render)
                if let stillBuffer, let streamPattern {
                    streamPattern.draw(into: stillBuffer.bytes, index: sequence, millis: exposed.milliseconds,
                                       render: render)
                }
            }
            var companion: Frame?
            if let stillBuffer, let size = settings.stillStream {
                companion = Frame.i420(width: size.width, height: size.height, buffer: stillBuffer, timestamp: due,
                                       sequence: sequence, metadata: meta, onRelease: { [weak self] in
                                           self?.state.withLock { $0.streamBuffers.append(stillBuffer) }
                                       })
            }
            let frame = Frame.i420(width: settings.width, height: settings.height, buffer: buffer,
                                   timestamp: due, sequence: sequence, metadata: meta, companion: companion,
                                   onRelease: { [weak self] in
                                       self?.state.withLock { $0.freeBuffers.append(buffer) }
                                   })
            // Delivered under the lock, so a still or stop that began while drawing wins.
            let (sent, dropped): (SimStream<Frame>.Sent, Frame?) = state.withLock { s in
                guard s.generation == generation, let stream = s.stream else { return (.terminated, nil) }
                let (sent, dropped) = stream.send(frame)
                switch sent {
                case .terminated: break
                case .enqueued, .droppedOldest:
                    s.delivered += 1
                    if sent == .droppedOldest { s.dropped += 1 }
                    s.lastSequence = sequence
                    s.lastFrameTime = due
                    if let from = s.gapFrom {
                        s.lastVideoGap = due - from
                        s.gapFrom = nil
                    }
                }
                return (sent, dropped)
            }
            withExtendedLifetime(dropped) {}  // an unread frame goes back to the pool here, outside the lock
            if sent == .terminated { return }
        }
    }

    private func onDrawQueue(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            drawQueue.async {
                body()
                c.resume()
            }
        }
    }
}

/// Where the simulated camera's frames go: its own stream (`start()`: tests that read
/// frames), or a sink (`start(into:)`: the service's inbox).
enum SimFrameOutput: Sendable {
    case stream(SimStream<Frame>)
    case sink(FrameSink)

    /// As `SimStream.send`: the older frame let go is returned, to be released outside the camera's lock.
    func send(_ frame: Frame) -> (SimStream<Frame>.Sent, dropped: Frame?) {
        switch self {
        case .stream(let s): return s.send(frame)
        case .sink(let k):
            let old = k.deliver(frame)
            return (old == nil ? .enqueued : .droppedOldest, old)
        }
    }

    func finish() {
        switch self {
        case .stream(let s): s.finish()
        case .sink(let k): k.ended()
        }
    }

    var consumerCaughtUp: Bool {
        switch self {
        case .stream(let s): return s.consumerCaughtUp
        case .sink: return true  // the service's inbox: its tests wait for the loop itself (a status request)
        }
    }
}
