import Foundation
import ShutterCore
import ShutterMedia
import ShutterSim
import ShutterStorage

/// The running camera. This actor only turns events (button edges, frames,
/// requests, signals, timers) into inputs of the gesture recognizer and the
/// capture state machine, and hands the machine's actions to the parts that
/// carry them out (CameraService+Actions.swift):
///
/// - `CameraSupervisor`: the camera's start, restart and frames;
/// - `PhotoTaker`: the tap path (autofocus, flash, still, JPEG, durable save);
/// - `ClipRecorder`: the hold path (press-time clip, temp file, commit, finalise);
/// - `RequestBook`: which request waits for which capture.
///
/// One task group (`run`) owns every loop and every piece of work in flight;
/// stopping lets the work finish, then cancels the loops. Nothing slow runs here.
public actor CameraService {
    let config: ShutterConfig
    let roles: BoardRoles
    let clock: any MonotonicClock
    let storage: Storage
    let hooks: ServiceHooks
    let log = Log("shutter.service")
    let startedAt: MonotonicTime

    var recognizer: GestureRecognizer
    var machine: CaptureStateMachine
    var watchdog: WatchdogPolicy
    var requests = RequestBook()

    // The parts.
    let supervisor: CameraSupervisor
    let photos: PhotoTaker
    let clips: ClipRecorder
    let statusDriver: LEDDriver?
    let flashDriver: LEDDriver?

    // Camera facts.
    var camera: (any CameraDevice)?
    var cameraHealthy = false
    var isReady = false
    var storageProbed = false
    var ring: FrameRing
    var framesSinceMeter = 0
    var autofocus: Eventually<AutofocusResult>?
    /// Photos during a recording waiting for the next video frame (the `focused` moment).
    var pendingSnapshots: [(id: CaptureID, at: MonotonicTime, releasedAt: MonotonicTime)] = []
    /// The `press` moment's pinned frames, by the press or request they belong to.
    var pins: [CaptureOrigin: PinEntry] = [:]
    /// Taps' release times by press, until their photo is taken.
    var tapEnds: [MonotonicTime: MonotonicTime] = [:]
    /// The last photo's moment and timing (`status`).
    var lastPhoto: PhotoReport?
    /// The longest gap between video frames since the last photo began, and the last frame's time.
    var videoGap = Duration.zero
    var lastVideoFrameAt: MonotonicTime?

    /// The clip being encoded: speculative (no id) from a press, or a recording.
    struct ClipState {
        var id: CaptureID?
        var start: MonotonicTime?
        var path: String?
        var stopAt: MonotonicTime?
    }
    var clip: ClipState?
    /// The web page's live preview and clips' poster frames (PreviewTap); nil = none.
    var previewTap: PreviewTap?
    /// The last speculative clip thrown away (a tap's): its photo is reported once it is gone.
    var lastDiscard: Eventually<Void>?
    /// Clips get an audio track only while the microphone delivers.
    var micRunning = false
    /// The button press being held (known to the machine), for a socket `release`.
    var heldPress: MonotonicTime?
    /// The press a control-socket client made (`press`), until its `release`.
    var clientPress: MonotonicTime?
    /// When a gesture deadline fell due and the button was asked to catch up
    /// (`ButtonInput.catchUp`), until its answer comes.
    var catchUpAskedAt: MonotonicTime?

    // What `status` and refusals say.
    var counters = ServiceStatus.Counters()
    var lastError: String?
    var lastFiles: [String] = []
    var freeBytes: UInt64?
    var statusPatternName = "booting"
    var flashPatternName = "off"
    var lastStatusLine = ""
    /// What each capture in flight is doing, for "busy: ..." refusals.
    var inProgress: [CaptureID: String] = [:]
    var reportLog = CameraReportLog()

    // Runtime settings (CameraService+Settings.swift).
    /// The configuration's settable keys with the runtime changes over them.
    var settings: RuntimeSettings
    /// Changed settings not yet applied (a capture was in progress).
    var settingsWaiting = false
    /// The state file lags the settings (keys dropped at load).
    var settingsDirty = false
    /// The sensor controls the camera is to have: given before each start and on a change.
    var cameraControls: CameraControls
    var controlsInFlight = false
    /// Replies waiting for the camera to have the controls (`set`, `reset`).
    var controlWaiters: [CheckedContinuation<Void, Never>] = []
    /// The newest frame's metadata: what `get` shows as in effect.
    var lastMetadata: FrameMetadata?
    /// A `shutterctl camera` switch, or a restart for a setting, is under way
    /// (CameraService+CameraSwitch.swift).
    var cameraSwitching = false
    /// What the camera is opened with (sizes, sensor HDR): the supervisor's, as of the last start.
    var cameraOpening: CameraOpening
    /// A reopen is under way and the next camera has not started: frames still
    /// coming from the one being stopped are dropped (they would mark the
    /// camera healthy, and the watchdog fed, while there is none).
    var reopenPending = false
    /// The switch waiting for the capture in progress to end.
    var switchWaiters: [CheckedContinuation<Void, Never>] = []
    /// Rereads the configuration (SIGHUP); nil where there is no file to reread.
    let reloadConfig: (@Sendable () throws(ConfigError) -> ShutterConfig)?

    // The run loop.
    typealias Job = @Sendable () async -> Void
    let wakeup = Wakeup()
    private let jobs: AsyncStream<Job>
    private let jobsIn: AsyncStream<Job>.Continuation
    private var jobsInFlight = 0
    private var jobsClosed = false
    private(set) var exitCode: Int32?
    var stopping = false

    /// `reloadConfig`: loads the configuration again as at start, for SIGHUP.
    public init(config: ShutterConfig, roles: BoardRoles, hooks: ServiceHooks = ServiceHooks(),
                clock: any MonotonicClock = SystemClock(), wallClock: any WallClock = SystemWallClock(),
                reloadConfig: (@Sendable () throws(ConfigError) -> ShutterConfig)? = nil) {
        self.config = config
        self.reloadConfig = reloadConfig
        settings = RuntimeSettings(base: config)
        cameraControls = config.camera.controls
        self.roles = roles
        self.hooks = hooks
        self.clock = clock
        storage = Storage(config: config)
        startedAt = clock.now()
        recognizer = GestureRecognizer(settings: GestureSettings(config: config))
        machine = CaptureStateMachine(
            configuration: .init(maxRecording: .seconds(config.video.maxSeconds),
                                 flash: FlashPolicy(darkLux: config.flash.autoLux), videoTorch: config.video.torch,
                                 stillMoment: config.still.moment),
            flashMode: FlashMode(config.flash.mode))
        var wd = WatchdogConfiguration()
        wd.frameTimeout = .milliseconds(config.watchdog.frameTimeoutMs)
        wd.initialBackoff = .milliseconds(config.watchdog.restartBackoffMs)
        wd.maxConsecutiveRestartFailures = config.watchdog.maxRestarts
        watchdog = WatchdogPolicy(configuration: wd, startedAt: startedAt)
        // Enough frames to reach back past the stability filter to the press.
        let period = 1000 / max(config.video.fps, 1)
        ring = FrameRing(capacity: min(4, 2 + config.button.stabilityMs / max(period, 1)))
        let ledLog = Log("shutter.led")
        statusDriver = roles.statusLED.map { LEDDriver(output: $0, clock: clock, log: { ledLog.warning($0) }) }
        flashDriver = roles.flashLED.map { LEDDriver(output: $0, clock: clock, log: { ledLog.warning($0) }) }
        cameraOpening = CameraOpening(config)
        supervisor = CameraSupervisor(opening: cameraOpening, open: roles.openCamera)
        photos = PhotoTaker(config: config, storage: storage, clock: clock, wallClock: wallClock,
                            flashLED: flashDriver, cameraAppliesTransform: roles.cameraAppliesTransform)
        var settings = RecordingSettings(
            videoEncoder: config.video.encoder.rawValue, preset: config.video.preset, fps: config.video.fps,
            videoBitrate: config.video.bitrateKbps * 1000, audioChannels: config.audio.channels,
            audioSampleRate: config.audio.sampleRate, audioBitrate: config.audio.bitrateKbps * 1000,
            segmentSeconds: Double(config.video.segmentSeconds))
        settings.keyframeInterval = .milliseconds(Int64(config.video.keyframeIntervalMs))
        clips = ClipRecorder(storage: storage, settings: settings, clock: clock,
                             prerollSeconds: config.video.prerollSeconds)
        (jobs, jobsIn) = AsyncStream.makeStream(of: Job.self)
    }

    // MARK: - Run

    /// Runs until `stop()` (SIGTERM/SIGINT), a watchdog give-up or power off;
    /// returns the process exit code. `signals` are handled in the order they come.
    public func run(signals: AsyncStream<ServiceSignal>? = nil) async -> Int32 {
        let board = config.board.description.isEmpty ? roles.name : "\(roles.name) (\(config.board.description))"
        log.notice("board \(board); storage \(storage.root); button hold \(config.button.holdMs) ms, max clip \(config.video.maxSeconds) s")
        if let e = photos.unavailableReason { log.error("still encoder unavailable: \(e)") }
        publishStatus("starting on \(board)")
        await statusDriver?.show(.booting)
        await prepareStorage()
        await loadSettings()
        cameraOpening = CameraOpening(settings.effective)
        await supervisor.prepareOpening(cameraOpening)
        await chooseRememberedCamera()
        await probeStorage()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await self.supervisor.run(prepare: { await self.prepareCamera($0) }) { await self.camera($0) }
            }
            if let button = roles.button {
                let events = button.events()
                group.addTask { for await e in events { await self.button(e) } }
            }
            group.addTask { await self.microphoneLoop() }
            group.addTask { await self.storageProbeLoop() }
            group.addTask { await self.timerLoop() }
            if let signals {
                group.addTask { for await s in signals { await self.signal(s) } }
            }
            // Work (photos, clips, autofocus, LED changes) joins the group as it is
            // decided; the stream ends once stopping and nothing is in flight.
            for await job in jobs { group.addTask(operation: job) }
            group.cancelAll()  // only the loops are left
        }
        requests.answerAll(.failed("shutterd is stopping"))
        await statusDriver?.stop()
        await flashDriver?.stop()
        return exitCode ?? 0
    }

    /// SIGTERM / SIGINT: finish the current file, then exit 0.
    public func stop() {
        guard !stopping else { return }
        stopping = true
        hooks.stopping()
        log.notice("stopping: finishing the current files")
        failUnchosenPins()
        if let c = clip {
            if c.id != nil {
                clip?.stopAt = clock.now()
                finishClip()
            } else {
                dropUncommittedClip()
            }
        }
        requestExit(0)
    }

    /// Runs `body` as a child of the run loop's group: off the actor, awaited at stop.
    func spawn(_ body: @escaping Job) {
        guard !jobsClosed else {
            log.warning("work decided after the service stopped was not done")
            return
        }
        jobsInFlight += 1
        jobsIn.yield { await body(); await self.jobDone() }
    }

    private func jobDone() {
        jobsInFlight -= 1
        closeJobsIfDone()
    }

    func requestExit(_ code: Int32) {
        if exitCode == nil { exitCode = code }
        closeJobsIfDone()
    }

    private func closeJobsIfDone() {
        guard exitCode != nil, jobsInFlight == 0, !jobsClosed else { return }
        jobsClosed = true
        jobsIn.finish()
    }

    // MARK: - Loops

    private func timerLoop() async {
        while !Task.isCancelled {
            await wakeup.wait(until: nextWake(), on: clock)
            if Task.isCancelled { return }
            tick()
        }
    }

    /// The earliest deadline of the recognizer, the machine, the watchdog, a
    /// stopping clip or a waiting client, or a half-second heartbeat (watchdog
    /// pings, status).
    private func nextWake() -> MonotonicTime {
        let now = clock.now()
        var next = now + .milliseconds(500)
        // While the button catches up its answer wakes the loop; the timeout is the bound.
        let gesture = catchUpAskedAt.map { $0 + Self.catchUpTimeout } ?? recognizer.nextDeadline
        for d in [gesture, machine.nextDeadline, watchdog.nextDeadline,
                  clip?.stopAt.map { $0 + .milliseconds(300) }, requests.nextDeadline] {
            if let d, d < next { next = max(d, now) }
        }
        return next
    }

    private func storageProbeLoop() async {
        while !Task.isCancelled {
            do { try await clock.sleep(for: .seconds(5)) } catch { return }
            await probeStorage()
        }
    }

    /// The microphone opens off the actor (an ALSA open can block); its sound goes
    /// straight to the clip recorder, never through the actor.
    private func microphoneLoop() async {
        guard config.audio.enabled, let mic = roles.microphone else { return }
        let channels = config.audio.channels, rate = config.audio.sampleRate
        let opened: Result<AsyncStream<AudioChunk>, any Error> = await Blocking.run(on: DispatchQueue(label: "shutter.mic.open")) {
            Result { try mic.start(sampleRate: rate, channels: channels) }
        }
        guard case .success(let chunks) = opened else {
            if case .failure(let e) = opened { log.warning("microphone unavailable, clips will have no sound: \(e)") }
            return
        }
        micRunning = true
        await Self.pump(chunks, into: clips)
        micRunning = false
        if !Task.isCancelled, !stopping {
            log.warning("microphone stopped delivering sound: clips continue without audio")
        }
        mic.stop()
    }

    private nonisolated static func pump(_ chunks: AsyncStream<AudioChunk>, into clips: ClipRecorder) async {
        for await c in chunks { clips.offer(c) }
    }

    // MARK: - Button and time

    func button(_ event: ButtonEvent) {
        switch event {
        case .edge(let e):
            edge(e)
        case .caughtUp(let t):
            catchUpAskedAt = nil
            feed(recognizer.advance(to: t))
            wakeup.notify()
        }
    }

    /// A raw edge, from the button or a control-socket client's press.
    func edge(_ e: ButtonEdge) {
        feed(recognizer.feed(e))
        wakeup.notify()
    }

    func tick() {
        let now = clock.now()
        decideGestures(now: now)
        if let d = machine.nextDeadline, d <= now { apply(machine.handle(.tick, at: now)) }
        requests.expire(now: now, lastError: lastError)
        tidyPins(now: now)
        evaluateWatchdog(now)
        finishClipIfStopped(now: now, frameAfterStop: false)
        applySettingsIfIdle()
        resumeCameraSwitchIfIdle()
    }

    /// A gesture deadline that fell due is decided once the button has caught up, behind
    /// every edge it saw before now: deciding on the clock alone would settle a bounce
    /// whose later edges are still on their way (two photos from one press on a loaded
    /// CPU). With no button, or one that does not answer within a second, the clock decides.
    private func decideGestures(now: MonotonicTime) {
        guard let d = recognizer.nextDeadline, d <= now else { return }
        if let button = roles.button, !(catchUpAskedAt.map { now - $0 >= Self.catchUpTimeout } ?? false) {
            if catchUpAskedAt == nil {
                catchUpAskedAt = now
                button.catchUp()
            }
            return
        }
        if catchUpAskedAt != nil { log.warning("the button did not catch up within 1 s: gestures decided on the clock") }
        catchUpAskedAt = nil
        feed(recognizer.advance(to: now))
    }

    static let catchUpTimeout = Duration.seconds(1)

    func feed(_ gestures: [GestureEvent]) {
        let now = clock.now()
        for g in gestures {
            log.debug("gesture \(g)")
            switch g {
            case .pressed(let p): heldPress = p
            case .tap(let s, let e):
                noteTap(start: s, end: e)
                if heldPress == s { heldPress = nil }
            case .hold(let s, _), .doubleTap(let s, _): if heldPress == s { heldPress = nil }
            case .shutdownCountdown:
                log.notice("shutdown gesture: countdown started, release to cancel")
            default: break
            }
            apply(machine.handle(.gesture(g), at: now))
        }
    }

    // MARK: - Camera

    func camera(_ event: CameraSupervisor.Event) async {
        switch event {
        case .frame(let f):
            frame(f)
        case .started(let info, let restart):
            reopenPending = false
            camera = await supervisor.camera
            cameraOpening = await supervisor.opening
            logCameraReport(model: info.model, restart: restart)
            if restart { watchdog.cameraRestartSucceeded(at: clock.now()) }
        case .unavailable(let error, let restart):
            cameraUnavailable(error, restart: restart)
        case .lost:
            guard exitCode == nil, !stopping else { return }
            cameraHealthy = false
            camera = nil
            lastMetadata = nil
            log.warning("camera stream ended (unplugged or failed); will retry")
            apply(machine.handle(.fault(.cameraLost), at: clock.now()))
            publishStatus("waiting for camera")
        }
    }

    private func cameraUnavailable(_ error: any Error, restart: Bool) {
        cameraHealthy = false
        lastMetadata = nil
        let absent = (error as? CameraError)?.code == .noDevice
        if lastError != "\(error)" { log.warning("camera unavailable: \(error)") }
        lastError = "\(error)"
        if absent && !isReady {
            // No camera at boot: wait for one, retrying quietly, never giving up
            // (the LED shows code 2; systemd sees STATUS "waiting for camera").
            watchdog = WatchdogPolicy(configuration: watchdog.configuration, startedAt: clock.now())
        } else if restart {
            watchdog.cameraRestartFailed(at: clock.now())
        }
        apply(machine.handle(.fault(.cameraLost), at: clock.now()))
        publishStatus("waiting for camera")
    }

    func attachPreview(_ tap: PreviewTap) { previewTap = tap }

    func frame(_ f: Frame) {
        if reopenPending { return }
        let now = clock.now()
        watchdog.frameArrived(at: now)
        lastMetadata = f.metadata
        if !cameraHealthy {
            cameraHealthy = true
            if isReady || lastError != nil { log.notice("camera frames are coming") }
            // Clears a no-camera fault latched while booting or running.
            apply(machine.handle(.cameraRestored, at: now))
            becomeReadyIfPossible()
        }
        framesSinceMeter += 1
        if framesSinceMeter >= 10 {
            framesSinceMeter = 0
            _ = machine.handle(.sceneMetered(f.metadata), at: now)
        }
        ring.push(f)
        noteVideoFrame(f)
        if !pins.isEmpty { choosePinnedFrames() }
        if clip != nil || clips.hasPreroll { clips.offer(f) }
        previewTap?.offer(f, now: now, recording: clip?.id)
        if let t = clips.progress.lastAccepted, clip?.id != nil { watchdog.encoderProgress(at: t) }
        if !pendingSnapshots.isEmpty { saveSnapshots(f) }
        finishClipIfStopped(now: now, frameAfterStop: f.timestamp > (clip?.stopAt ?? f.timestamp))
        if let cam = camera { counters.droppedFrames = cam.droppedFrames }
    }

    private func evaluateWatchdog(_ now: MonotonicTime) {
        switch watchdog.evaluate(now: now) {
        case .healthy:
            if isReady { hooks.watchdogPing() }
        case let .restartCamera(attempt, backoff):
            counters.cameraRestarts += 1
            if isReady || attempt == 1 {
                log.warning("no camera frames: restart attempt \(attempt) (after \(backoff.milliseconds) ms backoff)")
            }
            if cameraHealthy {
                cameraHealthy = false
                apply(machine.handle(.fault(.cameraLost), at: now))
            }
            publishStatus(isReady ? "camera stalled, restarting (attempt \(attempt))" : "waiting for camera")
            ring.removeAll()
            let supervisor = self.supervisor
            spawn { await supervisor.restart() }
        case .unhealthy(.encoderStalled):
            // Finish what can be finished: end the clip (what was written stays
            // playable); the next press starts a fresh encoder.
            if clip?.id != nil, clip?.stopAt == nil {
                log.error("the video encoder stopped making progress: ending the clip")
                counters.errors += 1
                lastError = WatchdogReason.encoderStalled.message
                clip?.stopAt = now
                clips.stop(at: now)
            }
        case .waiting, .unhealthy:
            if cameraHealthy, watchdog.consecutiveFailures > 0 { cameraHealthy = false }
        case let .giveUp(reason):
            log.error("giving up: \(reason.message); exiting \(reason.exitCode) so systemd restarts the service")
            publishStatus("failed: \(reason.message)")
            requestExit(reason.exitCode)
        }
    }

    // MARK: - Signals

    func signal(_ s: ServiceSignal) {
        switch s {
        case .photo: _ = submit(.photo)
        case .toggleRecording: toggleRecording()
        case .stop: stop()
        case .reload: reloadConfiguration()
        }
    }

    var isRecording: Bool {
        if case .recording = machine.state { return true }
        return false
    }
}

/// What a Unix signal asks of the service (SIGUSR1, SIGUSR2, SIGTERM/SIGINT, SIGHUP).
public enum ServiceSignal: Sendable {
    case photo, toggleRecording, stop
    /// Reread the configuration file: its runtime settings take effect.
    case reload
}

extension FlashMode {
    init(_ mode: ShutterConfig.Flash.Mode) {
        switch mode {
        case .off: self = .off
        case .on: self = .on
        case .auto: self = .auto
        }
    }
}
