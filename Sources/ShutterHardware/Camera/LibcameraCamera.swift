// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import CLibcameraShim
import Dispatch
import ShutterCore
import Synchronization

/// The real camera, through libcamera. Configuration changes (start, stop,
/// the switch to stills and back) run on a dedicated serial queue; completed
/// requests arrive through the shim's eventfd, watched by a DispatchSource on
/// a second serial queue that yields into a bounded AsyncStream. A `Frame`
/// points into buffers mapped once; dropping it requeues its request.
public final class LibcameraCamera: CameraDevice {
    public let info: CameraInfo
    public let descriptor: LibcameraCameraDescription

    private let handle: ShimCameraHandle
    // Keeps the Swift manager (and so the process's CameraManager) alive at
    // least as long as this camera: teardown order camera -> manager.
    private let manager: LibcameraCameraManager
    private let controlQueue = DispatchQueue(label: "shutter.camera.control")
    private let eventQueue = DispatchQueue(label: "shutter.camera.events")
    private let state: Mutex<State>
    /// Frames dropped for a slow consumer, readable without `state`'s lock (the service's
    /// `status` never waits for the camera's threads).
    private let dropped = Atomic<Int>(0)
    /// It has AeMeteringMode: frames report the metering it was given.
    private let hasMetering: Bool

    private enum Mode {
        case idle
        case video
        case still(StillCollector)
    }

    private struct AutofocusWaiter {
        let id: UInt64
        let cycle: UInt64
        var lastState: AutofocusState?
        let continuation: CheckedContinuation<AutofocusResult, Never>
    }

    private struct State {
        var settings: LibcameraCameraSettings
        var mode: Mode = .idle
        /// The running configuration's geometry (video or still).
        var stream: GrantedStream?
        var videoStream: GrantedStream?
        /// The still stream beside video (`stillStreamBesideVideo`), while it runs.
        var companionStream: GrantedStream?
        /// What became of the still stream beside video at the last video start.
        var stillStreamReport: StillStreamReport?
        /// The buffers the last video start allocated.
        var bufferMemory: BufferMemoryReport?
        /// How the video size came about when none asked was granted.
        var videoSizeNote: String?
        var lastStillStream: GrantedStream?
        /// Where video frames go while streaming.
        var sink: FrameSink?
        var waiter: AutofocusWaiter?
        var nextWaiterID: UInt64 = 0
        var lastGoodLensPosition: Double?
        var lastMetadata: FrameMetadata?
        /// The asked-for controls each configuration's last start lacked.
        var lacking: [CameraStreamRole: [LackingControl]] = [:]
        var disconnected = false
        var source: (any DispatchSourceRead)?
    }

    init(handle: ShimCameraHandle, description: LibcameraCameraDescription,
         settings: LibcameraCameraSettings, manager: LibcameraCameraManager) {
        self.handle = handle
        self.descriptor = description
        self.manager = manager
        let model = description.model.lowercased()
        let make = model.hasPrefix("imx") ? "Sony" : model.hasPrefix("ov") ? "OmniVision" : ""
        info = CameraInfo(make: make, model: description.model, id: description.id,
                          hasAutofocus: description.hasAutofocus,
                          pixelArraySize: description.pixelArraySize.map { ($0.width, $0.height) })
        state = Mutex(State(settings: settings))
        hasMetering = shc_camera_has_control(handle.pointer, "AeMeteringMode") != 0

        // The source watches its own duplicate of the shim's eventfd and closes
        // it in the cancel handler: Dispatch may still poll the fd after cancel(),
        // while the shim closes its copy as soon as the camera state goes.
        let fd = dup(shc_camera_event_fd(handle.pointer))
        let queue = eventQueue
        // Created inside the lock: a DispatchSource is not Sendable, so it never leaves State.
        state.withLock { s in
            guard fd >= 0 else { return } // EMFILE: no frames arrive, the watchdog sees a stalled camera
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            source.setEventHandler { [weak self] in self?.drain() }
            source.setCancelHandler { close(fd) }
            source.resume()
            s.source = source
        }
        // The controls are set at every start (`applyStartControls`): some need the
        // configured mode (the crop area), and each role has its own (denoise).
    }

    deinit {
        // No event handler can be running: each holds a strong reference while
        // it runs. The shim stops, releases the camera and its manager reference.
        state.withLock { s in
            s.sink?.ended()
            s.sink = nil
            s.source?.cancel()
            s.source = nil
        }
        shc_camera_close(handle.pointer)
    }

    // MARK: CameraDevice

    public var droppedFrames: Int { dropped.load(ordering: .relaxed) }

    public var streamDepth: Int { max(1, state.withLock { $0.settings.streamDepth }) }

    public func start(into sink: FrameSink) async throws {
        try await onControlQueue { try self.startVideoBlocking(sink) }
    }

    public func stop() async {
        _ = try? await onControlQueue {
            shc_camera_stop(self.handle.pointer)
            let c = self.state.withLock { s -> FrameSink? in
                s.mode = .idle
                s.stream = nil
                defer { s.sink = nil }
                return s.sink
            }
            c?.ended()
        }
    }

    public func captureStill() async throws -> Frame {
        try await onControlQueue { try self.captureStillBlocking() }
    }

    public func autofocus(timeout: Duration) async -> AutofocusResult {
        guard descriptor.hasAutofocus else {
            // Fixed-focus lens: nothing to wait for.
            return AutofocusResult(state: .idle, lensPosition: nil, timedOut: false)
        }
        let focus = state.withLock { $0.settings.controls.focus }
        if focus.effectiveMode == .manual {
            // Manual focus: a press must not move the lens.
            return AutofocusResult(state: .idle, lensPosition: focus.lensPosition ?? descriptor.defaultLensPosition,
                                   timedOut: false)
        }
        let cycle = shc_camera_af_trigger(handle.pointer)
        if cycle < 0 {
            return AutofocusResult(state: .failed, lensPosition: applyFallbackLensPosition(), timedOut: false)
        }
        return await withCheckedContinuation { (c: CheckedContinuation<AutofocusResult, Never>) in
            let (id, superseded) = state.withLock { s -> (UInt64, AutofocusWaiter?) in
                s.nextWaiterID += 1
                let old = s.waiter
                s.waiter = AutofocusWaiter(id: s.nextWaiterID, cycle: UInt64(cycle), lastState: nil,
                                           continuation: c)
                return (s.nextWaiterID, old)
            }
            superseded?.continuation.resume(
                returning: AutofocusResult(state: superseded?.lastState ?? .idle, lensPosition: nil, timedOut: true))
            let ns = max(0, Int(timeout.nanoseconds))
            eventQueue.asyncAfter(deadline: .now() + .nanoseconds(ns)) { [weak self] in
                self?.autofocusDeadline(id: id)
            }
        }
    }

    // MARK: More than the role

    /// What the pipeline granted for video at the last start.
    public var videoStream: GrantedStream? { state.withLock { $0.videoStream } }
    /// What the pipeline granted for the last still.
    public var lastStillStream: GrantedStream? { state.withLock { $0.lastStillStream } }
    /// The still stream running beside video, if any: each video frame's `companion`.
    public var companionStream: GrantedStream? { state.withLock { $0.companionStream } }

    public var stillStreamSize: PixelSize? {
        state.withLock { s in
            if case .video = s.mode { return s.companionStream?.size }
            return nil
        }
    }
    /// Metadata of the most recent frame (for auto-flash and EXIF between stills).
    public var lastMetadata: FrameMetadata? { state.withLock { $0.lastMetadata } }
    public var isDisconnected: Bool { state.withLock { $0.disconnected } }

    public var controlReport: CameraControlReport {
        state.withLock { s in
            var lacking: [LackingControl] = []
            for role in [CameraStreamRole.video, .still] {
                for l in s.lacking[role] ?? [] where !lacking.contains(where: { $0.control == l.control }) {
                    lacking.append(l)
                }
            }
            return CameraControlReport(asked: s.settings.controls, lacking: lacking,
                                       videoSize: s.videoStream.map(\.size),
                                       stillSize: s.lastStillStream.map(\.size),
                                       sensorHDR: { if case .on = s.settings.sensorHDR { true } else { false } }(),
                                       stillStream: s.stillStreamReport, bufferMemory: s.bufferMemory,
                                       videoSizeNote: s.videoSizeNote)
        }
    }

    public struct Counters: Sendable, Equatable {
        public var completed: UInt64
        /// Requests cancelled while running: camera timeouts for the watchdog.
        public var timeouts: UInt64
        public var failed: UInt64
        public var requeueErrors: UInt64
        public var dropped: Int
        public var running: Bool
        public var disconnected: Bool
    }

    public var counters: Counters {
        var c = shc_counters()
        shc_camera_counters(handle.pointer, &c)
        return Counters(completed: c.completed, timeouts: c.cancelled_while_running, failed: c.failed,
                        requeueErrors: c.requeue_errors, dropped: droppedFrames, running: c.running != 0,
                        disconnected: c.disconnected != 0)
    }

    /// Sets `controls` for the running video stream (libcamera takes them with
    /// the next request) and for every later start. On the control queue, so a
    /// change is ordered with starts and stills and never lands inside a still's
    /// configure-and-capture. Stopped, they are only kept: the next start sets
    /// them, after its configure (the crop area depends on the sensor mode).
    public func apply(_ controls: CameraControls) async {
        _ = try? await onControlQueue {
            let streaming: Bool = self.state.withLock { s in
                s.settings.controls = controls
                if case .video = s.mode { return true }
                return false
            }
            if streaming { self.applyControls(controls, role: .video) }
        }
    }

    /// Any libcamera control by name (the escape hatch for what CameraControls lacks).
    public func setControl(_ setting: ControlSetting, persistent: Bool = true) throws {
        let r = setControl(setting.name, setting.values, persistent: persistent)
        if r < 0 { throw CameraError.fromShim(r, "set \(setting)") }
    }

    /// Whether this camera has a libcamera control of that name ("AfMode", "AeFlickerMode", ...).
    public func supportsControl(_ name: String) -> Bool {
        shc_camera_has_control(handle.pointer, name) != 0
    }

    /// Range and default of a numeric control, nil when the camera lacks it.
    public func controlRange(_ name: String) -> (min: Double, max: Double, default: Double?)? {
        var lo = 0.0, hi = 0.0, def = 0.0
        guard shc_camera_control_range(handle.pointer, name, &lo, &hi, &def) == 0 else { return nil }
        return (lo, hi, def.isNaN ? nil : def)
    }

    // MARK: Control queue (blocking libcamera calls live here)

    private func onControlQueue<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
            controlQueue.async { c.resume(with: Result { try body() }) }
        }
    }

    private func startVideoBlocking(_ sink: FrameSink) throws {
        let old = state.withLock { s -> FrameSink? in
            defer { s.sink = sink }
            return s.sink
        }
        old?.ended()
        do {
            try runVideoBlocking()
        } catch {
            sink.ended()
            state.withLock { $0.sink = nil }
            throw error
        }
    }

    /// Configures and starts the video stream; frames go to the current sink.
    /// When the buffers of video and a still stream beside it cannot be allocated
    /// together (a Pi's CMA area is small), video alone, and the report says why.
    private func runVideoBlocking() throws {
        shc_camera_stop(handle.pointer)
        state.withLock { $0.mode = .idle }
        var config = try configureVideoBlocking(settings: state.withLock { $0.settings })
        // Also puts AfMode back to the configured mode after a press's AF cycle.
        applyStartControls(.video, config.settings)
        setVideoState(config)
        var r = shc_camera_start(handle.pointer)
        if r < 0, let still = config.still {
            let why = r == -ENOMEM ? "the buffers of both streams could not be allocated (\(Self.planned([config.video, still])))"
                : CameraError.fromShim(r, "starting \(config.video.size) video with a \(still.size) still stream").message
            let video = try configureBlocking(still: false, settings: config.settings)
            config = VideoConfiguration(video: video, still: nil, report: StillStreamReport(notGranted: "\(why); video alone"),
                                        note: config.note, settings: config.settings)
            applyStartControls(.video, config.settings)
            setVideoState(config)
            r = shc_camera_start(handle.pointer)
        }
        if r < 0 {
            state.withLock { $0.mode = .idle }
            if r == -ENOMEM {
                throw CameraError(.system, "Camera.start(video \(config.video.libcameraDescription)): its buffers could not be allocated (\(Self.planned([config.video]))); on a Raspberry Pi the CMA area is too small for them (docs/control-and-api.md: Buffer memory)", errno: ENOMEM)
            }
            throw CameraError.fromShim(r, "Camera.start(video \(config.video.libcameraDescription))")
        }
        var video = shc_buffer_usage(), still = shc_buffer_usage()
        shc_camera_buffer_usage(handle.pointer, &video, &still)
        let memory = BufferMemoryReport(streams: [(video, config.video, "video"), (still, config.still, "still")].compactMap {
            guard let stream = $0.1, $0.0.count > 0 else { return nil }
            return BufferMemoryReport.Stream(role: $0.2, size: stream.size, count: Int($0.0.count),
                                             bytesPerBuffer: Int(clamping: $0.0.bytes_per_buffer))
        })
        state.withLock { $0.bufferMemory = memory }
    }

    /// "4 x 3.1 MB + 4 x 17.9 MB": the buffers the configured streams ask for.
    private static func planned(_ streams: [GrantedStream]) -> String {
        streams.map { "\($0.bufferCount) x \(BufferMemoryReport.megabytes($0.frameSize))" }.joined(separator: " + ")
    }

    private func setVideoState(_ config: VideoConfiguration) {
        state.withLock { s in
            s.mode = .video
            s.stream = config.video
            s.videoStream = config.video
            s.companionStream = config.still
            s.stillStreamReport = config.report
            s.videoSizeNote = config.note
            s.bufferMemory = nil
        }
    }

    private func captureStillBlocking() throws -> Frame {
        let (wasVideo, settings) = state.withLock { s -> (Bool, LibcameraCameraSettings) in
            if case .video = s.mode { return (true, s.settings) }
            return (false, s.settings)
        }
        shc_camera_stop(handle.pointer)
        state.withLock { s in
            s.mode = .idle
            s.companionStream = nil
        }
        defer {
            if wasVideo {
                do {
                    try runVideoBlocking()
                } catch {
                    // The stream ends so the service sees the camera failed and restarts it.
                    let c = state.withLock { s -> FrameSink? in
                        defer { s.sink = nil }
                        return s.sink
                    }
                    c?.ended()
                }
            }
        }
        let granted = try configureBlocking(still: true, settings: settings)
        applyStartControls(.still, settings)
        let collector = StillCollector(warmupFrames: settings.stillWarmupFrames)
        state.withLock { s in
            s.mode = .still(collector)
            s.stream = granted
            s.lastStillStream = granted
        }
        let r = shc_camera_start(handle.pointer)
        if r < 0 {
            state.withLock { $0.mode = .idle }
            throw CameraError.fromShim(r, "Camera.start(still \(granted.libcameraDescription))")
        }
        let frame = collector.wait(timeout: settings.stillWaitTimeout)
        shc_camera_stop(handle.pointer)
        state.withLock { $0.mode = .idle }
        guard let frame else {
            if isDisconnected {
                throw CameraError(.disconnected, "the camera disappeared during a still; check the cable, the service will retry")
            }
            throw CameraError(.timeout, "no still frame within \(settings.stillWaitTimeout) after switching to \(granted.libcameraDescription); the camera may be stalled")
        }
        return frame
    }

    /// The role's own frame limits (`startControls(for:)`) and the configured
    /// controls, set persistently before each start so the other role's never
    /// linger. A camera without FrameDurationLimits (a USB webcam) keeps its own rate.
    private func applyStartControls(_ role: CameraStreamRole, _ settings: LibcameraCameraSettings) {
        var sensor: ClosedRange<Double>?
        if let r = controlRange("FrameDurationLimits"), r.min.isFinite, r.max.isFinite, r.min <= r.max {
            sensor = r.min...r.max
        }
        for setting in settings.startControls(for: role, sensorRange: sensor) {
            _ = setControl(setting.name, setting.values, persistent: true)
        }
        applyControls(settings.controls, role: role)
    }

    /// Sets the plan for `role` and keeps what the camera lacked (the plan's
    /// reasons, and any setting the camera refused) for `controlReport`.
    @discardableResult
    private func applyControls(_ controls: CameraControls, role: CameraStreamRole) -> [LackingControl] {
        let plan = controls.libcameraPlan(for: controlSupport(), role: role)
        var lacking = plan.lacking
        for setting in plan.settings {
            let r: Int32
            if setting.name == "AfWindows" {
                // An array of rectangles (with AfMetering): its own shim call; none = AfMetering Auto.
                let rect = setting.values.map { Int32($0) }
                r = rect.withUnsafeBufferPointer { shc_camera_set_af_windows(handle.pointer, $0.baseAddress, rect.count / 4) }
            } else {
                r = setControl(setting.name, setting.values, persistent: true)
            }
            guard r < 0 else { continue }
            let control = CameraControls.control(forLibcameraName: setting.name)
            let reason = r == -ENOTSUP ? "not supported by this camera"
                : "the camera refused \(setting): \(CameraError.fromShim(r, "set \(setting.name)"))"
            if !lacking.contains(where: { $0.control == setting.name }) {
                lacking.append(LackingControl(control: setting.name, reason: reason, keys: control?.keys.map(\.path) ?? []))
            }
        }
        state.withLock { $0.lacking[role] = lacking }
        return lacking
    }

    /// What the control mapping needs to know of this camera, as configured now.
    private func controlSupport() -> LibcameraControlSupport {
        let names = Set(LibcameraControlSupport.knownNames.filter(supportsControl))
        var cx: Int32 = 0, cy: Int32 = 0, cw: Int32 = 0, ch: Int32 = 0
        let crop = shc_camera_crop_maximum(handle.pointer, &cx, &cy, &cw, &ch) == 0 && cw > 0 && ch > 0
            ? PixelRect(x: Int(cx), y: Int(cy), width: Int(cw), height: Int(ch)) : nil
        return LibcameraControlSupport(names: names, cropMaximum: crop,
                                       flickerModeMaximum: controlRange("AeFlickerMode")?.max,
                                       defaultLensPosition: descriptor.defaultLensPosition,
                                       sensorHDR: state.withLock { $0.settings.sensorHDR })
    }

    /// What a video configuration came to: `settings` are the ones it was made
    /// with (their video sizes replaced when the camera granted none asked).
    private struct VideoConfiguration {
        var video: GrantedStream
        var still: GrantedStream?
        var report: StillStreamReport?
        var note: String?
        var settings: LibcameraCameraSettings
    }

    /// The video configuration: video alone, or with `stillStreamBesideVideo` the
    /// largest still stream that the pipeline grants beside it without lowering
    /// the video rate (`StillStreamChoice`), tried size by size; the report says
    /// which, or why none. When the camera grants none of the asked video sizes,
    /// the nearest of the sizes its video stream lists (`VideoSizeChoice`).
    private func configureVideoBlocking(settings asked: LibcameraCameraSettings) throws -> VideoConfiguration {
        var settings = asked
        var video = try configureBlocking(still: false, settings: settings)
        var note: String?
        if VideoSizeChoice.needsChoice(granted: video.size, asked: settings.videoSizes) {
            let offered = streamSizes(still: false, formats: settings.videoFormats)
            let candidates = Array(VideoSizeChoice.candidates(asked: settings.videoSizes, offered: offered).prefix(16))
            let largest = offered.first.map { ", largest \($0)" } ?? ""
            if !candidates.isEmpty {
                var retry = settings
                retry.videoSizes = candidates
                let again = try configureBlocking(still: false, settings: retry)
                if candidates.contains(again.size) {
                    video = again
                    settings = retry
                    note = "the nearest to \(asked.videoSizes[0]) of the \(offered.count) sizes the camera lists\(largest)"
                } else {
                    video = try configureBlocking(still: false, settings: settings)
                }
            }
            if note == nil {
                note = "the camera adjusted to this; none of the \(offered.count) sizes it lists\(largest) was granted"
            }
        }
        guard settings.stillStreamBesideVideo else {
            return VideoConfiguration(video: video, still: nil, report: nil, note: note, settings: settings)
        }
        var stillSizes = settings.stillSizes
        if stillSizes.isEmpty, let full = descriptor.pixelArraySize { stillSizes = [full] }
        // The sensor's modes where there is a Raw role, else what the still stream lists.
        let sensor = sensorSizes()
        let offered = StillStreamChoice.offeredSizes(
            sensor: sensor, stillRole: sensor.isEmpty ? streamSizes(still: true, formats: settings.stillFormats) : [])
        let candidates = StillStreamChoice.candidates(stillSizes: stillSizes, sensorSizes: offered,
                                                      video: video.size)
        var last: (video: GrantedStream, still: GrantedStream?)?
        let outcome = try StillStreamChoice.choose(candidates: candidates, video: video.size,
                                                   framesPerSecond: settings.framesPerSecond) { size in
            let (v, still, result) = try configurePairBlocking(settings: settings, stillSize: size)
            last = (v, still)
            if result == SHC_STILL_ONE_STREAM { return .oneStream }
            guard still != nil, result == SHC_STILL_GRANTED else { return .notGranted }
            // The configured mode's limits (the Raspberry Pi IPA sets them at configure).
            return .granted(minimumFrameMicroseconds: controlRange("FrameDurationLimits")?.min)
        }
        if case .stillStream = outcome, let last, let still = last.still {
            return VideoConfiguration(video: last.video, still: still, report: StillStreamReport(granted: still.size),
                                      note: note, settings: settings)
        }
        var reason = "not granted"
        if case .none(let r) = outcome { reason = r }
        // Video alone: as the shim left it after a refused pair, else configured again
        // (the last try may have been a pair refused for the rate).
        let alone = last?.still == nil ? last?.video ?? video : try configureBlocking(still: false, settings: settings)
        return VideoConfiguration(video: alone, still: nil, report: StillStreamReport(notGranted: reason), note: note,
                                  settings: settings)
    }

    /// The sizes the video (or still) role's stream lists in `formats`, largest first; none when unknown.
    private func streamSizes(still: Bool, formats: [PixelFormat]) -> [CameraSize] {
        let fourccs = formats.map(CameraFourCC.fourcc(for:))
        var sizes = [shc_size](repeating: shc_size(), count: 128)
        let n = fourccs.withUnsafeBufferPointer { fp in
            sizes.withUnsafeMutableBufferPointer { sp in
                var req = shc_stream_request()
                req.role = still ? SHC_ROLE_STILL : SHC_ROLE_VIDEO
                req.fourccs = fp.baseAddress
                req.fourcc_count = fp.count
                return shc_camera_stream_sizes(handle.pointer, &req, sp.baseAddress, sp.count)
            }
        }
        guard n > 0 else { return [] }
        return sizes.prefix(Int(n)).map { CameraSize(width: Int($0.width), height: Int($0.height)) }
    }

    /// The sensor's own sizes (its modes on a Pi), largest first; none when unknown.
    private func sensorSizes() -> [CameraSize] {
        var sizes = [shc_size](repeating: shc_size(), count: 32)
        let n = sizes.withUnsafeMutableBufferPointer { shc_camera_sensor_sizes(handle.pointer, $0.baseAddress, $0.count) }
        guard n > 0 else { return [] }
        return sizes.prefix(Int(n)).map { CameraSize(width: Int($0.width), height: Int($0.height)) }
    }

    private func configureBlocking(still: Bool, settings: LibcameraCameraSettings) throws -> GrantedStream {
        try configureStreams(settings: settings, still: still, pairedStill: nil).video
    }

    /// Video plus a still stream of `stillSize` (YUV first, as the second ISP output needs on VC4).
    private func configurePairBlocking(settings: LibcameraCameraSettings, stillSize: CameraSize) throws
        -> (video: GrantedStream, still: GrantedStream?, result: Int32)
    {
        try configureStreams(settings: settings, still: false, pairedStill: stillSize)
    }

    /// One configure through the shim: the role's stream (video or still) and, for
    /// video with `pairedStill`, a still stream of that size beside it.
    private func configureStreams(settings: LibcameraCameraSettings, still: Bool, pairedStill: CameraSize?) throws
        -> (video: GrantedStream, still: GrantedStream?, result: Int32)
    {
        guard settings.rotation == 0 || settings.rotation == 180 else {
            throw CameraError(.rejected, "camera rotation \(settings.rotation) is not possible; use 0 or 180 (with hflip/vflip for mirrors)")
        }
        var sizes = still ? settings.stillSizes : settings.videoSizes
        if still && sizes.isEmpty, let full = descriptor.pixelArraySize { sizes = [full] }
        let cSizes = sizes.map(Self.cSize)
        let fourccs = (still ? settings.stillFormats : settings.videoFormats).map(CameraFourCC.fourcc(for:))
        let pairSizes = pairedStill.map { [Self.cSize($0)] } ?? []
        let pairFourccs = settings.stillFormats.map(CameraFourCC.fourcc(for:))
        var out = shc_stream_info(), stillOut = shc_stream_info()
        var result: Int32 = SHC_STILL_NOT_GRANTED
        let r: Int32 = cSizes.withUnsafeBufferPointer { sp in
            fourccs.withUnsafeBufferPointer { fp in
                pairSizes.withUnsafeBufferPointer { psp in
                    pairFourccs.withUnsafeBufferPointer { pfp in
                        var req = shc_stream_request()
                        req.role = still ? SHC_ROLE_STILL : SHC_ROLE_VIDEO
                        req.sizes = sp.baseAddress
                        req.size_count = sp.count
                        req.fourccs = fp.baseAddress
                        req.fourcc_count = fp.count
                        req.rotation = Int32(settings.rotation)
                        req.hflip = settings.horizontalFlip ? 1 : 0
                        req.vflip = settings.verticalFlip ? 1 : 0
                        req.buffer_count = still ? 0 : UInt32(clamping: settings.videoBufferCount)
                        guard pairedStill != nil else {
                            return shc_camera_configure(handle.pointer, &req, &out)
                        }
                        var pair = req
                        pair.role = SHC_ROLE_STILL
                        pair.sizes = psp.baseAddress
                        pair.size_count = psp.count
                        pair.fourccs = pfp.baseAddress
                        pair.fourcc_count = pfp.count
                        pair.buffer_count = 0
                        return shc_camera_configure_pair(handle.pointer, &req, &pair, &out, &stillOut, &result)
                    }
                }
            }
        }
        let what = still ? "still" : pairedStill.map { "video \(sizes) with a \($0) still stream" } ?? "video"
        if r < 0 { throw CameraError.fromShim(r, "Camera.configure(\(what) \(sizes))") }
        let video = try granted(out, what: still ? "still" : "video")
        let companion = result == SHC_STILL_GRANTED && stillOut.width > 0 ? try granted(stillOut, what: "the still stream") : nil
        return (video, companion, result)
    }

    private static func cSize(_ size: CameraSize) -> shc_size {
        shc_size(width: UInt32(clamping: size.width), height: UInt32(clamping: size.height))
    }

    private func granted(_ out: shc_stream_info, what: String) throws -> GrantedStream {
        let description = String(cTuple: out.description)
        guard let format = CameraFourCC.format(for: out.fourcc) else {
            throw CameraError(.unsupported, "the camera offers only \(description) for \(what); Shutter needs YUV420, NV12, YUYV, RGB888 or BGR888 (MJPEG-only webcams are not supported)")
        }
        return GrantedStream(size: CameraSize(width: Int(out.width), height: Int(out.height)), format: format,
                             stride: Int(out.stride), bufferCount: Int(out.buffer_count), exact: out.exact != 0,
                             transformGranted: out.transform_granted != 0, libcameraDescription: description,
                             frameSize: Int(out.frame_size))
    }

    // MARK: Event queue

    private func drain() {
        shc_camera_consume_event(handle.pointer)
        while true {
            var f = shc_frame()
            let r = shc_camera_next_frame(handle.pointer, &f)
            if r == -ENODEV {
                disconnected()
                return
            }
            guard r == 0, let raw = f.token else { return }
            let token = ShimFrameToken(pointer: raw)
            guard let (stream, companion, controls) = state.withLock({ s in
                s.stream.map { ($0, s.companionStream, s.settings.controls) }
            })
            else {
                token.release()
                continue
            }
            // No libcamera control places the exposure window (`AeMeteringWindow` is lacking): the mode meters.
            let metering = hasMetering ? MeteringInEffect(controls, honoursWindow: false) : nil
            let frame = CameraFrameAssembly.frame(from: f, stream: stream, still: companion,
                                                  whiteBalance: controls.whiteBalance, metering: metering, token: token)
            observeAutofocus(frame, cycle: f.af_cycle)
            let route = state.withLock { s -> (FrameSink?, StillCollector?) in
                s.lastMetadata = frame.metadata
                switch s.mode {
                case .video: return (s.sink, nil)
                case .still(let collector): return (nil, collector)
                case .idle: return (nil, nil)
                }
            }
            if let sink = route.0 {
                if sink.deliver(frame) != nil { dropped.add(1, ordering: .relaxed) }
            } else if let collector = route.1 {
                collector.offer(frame)
            }
        }
    }

    private func observeAutofocus(_ frame: Frame, cycle: UInt64) {
        guard let afState = frame.metadata.autofocusState else { return }
        let done = state.withLock { s -> (AutofocusWaiter, Double?)? in
            if afState == .focused, let lens = frame.metadata.lensPosition { s.lastGoodLensPosition = lens }
            guard var w = s.waiter, cycle >= w.cycle else { return nil }
            w.lastState = afState
            s.waiter = w
            guard afState == .focused || afState == .failed else { return nil }
            s.waiter = nil
            return (w, frame.metadata.lensPosition)
        }
        guard let (waiter, lens) = done else { return }
        if waiter.lastState == .focused {
            waiter.continuation.resume(returning: AutofocusResult(state: .focused, lensPosition: lens, timedOut: false))
        } else {
            waiter.continuation.resume(returning: AutofocusResult(state: .failed, lensPosition: applyFallbackLensPosition(),
                                                                  timedOut: false))
        }
    }

    private func autofocusDeadline(id: UInt64) {
        let waiter = state.withLock { s -> AutofocusWaiter? in
            guard let w = s.waiter, w.id == id else { return nil }
            s.waiter = nil
            return w
        }
        guard let waiter else { return }
        let lens = applyFallbackLensPosition()
        waiter.continuation.resume(returning: AutofocusResult(state: waiter.lastState ?? .scanning, lensPosition: lens,
                                                              timedOut: true))
    }

    /// The last position that focused, else the tuning's default (hyperfocal);
    /// set manually so a hung scan cannot keep the lens moving.
    private func applyFallbackLensPosition() -> Double? {
        let position = state.withLock { $0.lastGoodLensPosition } ?? descriptor.defaultLensPosition
        guard let position else { return nil }
        _ = setControl("AfMode", [0], persistent: true)
        _ = setControl("LensPosition", [position], persistent: true)
        return position
    }

    private func disconnected() {
        let (sink, collector, waiter) = state.withLock {
            s -> (FrameSink?, StillCollector?, AutofocusWaiter?) in
            s.disconnected = true
            var collector: StillCollector?
            if case .still(let c) = s.mode { collector = c }
            defer {
                s.sink = nil
                s.waiter = nil
            }
            return (s.sink, collector, s.waiter)
        }
        sink?.ended()
        collector?.abandon()
        waiter?.continuation.resume(returning: AutofocusResult(state: .failed, lensPosition: nil, timedOut: false))
    }

    private func setControl(_ name: String, _ values: [Double], persistent: Bool) -> Int32 {
        values.withUnsafeBufferPointer { vp in
            shc_camera_set_control(handle.pointer, name, vp.baseAddress, vp.count,
                                   persistent ? SHC_CONTROL_PERSISTENT : SHC_CONTROL_ONCE)
        }
    }
}
