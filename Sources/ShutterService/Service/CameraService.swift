import Foundation
import ShutterCore
import ShutterMedia
import ShutterSim
import ShutterStorage

/// The running camera: button edges, gestures, the capture state machine, the
/// camera, stills, clips, LEDs, storage and the watchdog, wired together. State
/// lives in this actor; blocking work (JPEG, fsync, finalising a clip) runs on
/// dedicated queues, and long waits never hold the actor.
public actor CameraService {
    let config: ShutterConfig
    let roles: BoardRoles
    let clock: any MonotonicClock
    let wallClock: any WallClock
    let storage: Storage
    let hooks: ServiceHooks
    let log = Log("shutter.service")
    let startedAt: MonotonicTime

    var recognizer: GestureRecognizer
    var machine: CaptureStateMachine
    var watchdog: WatchdogPolicy

    // Camera
    var camera: (any CameraDevice)?
    var frameTask: Task<Void, Never>?
    var streamGeneration: UInt64 = 0
    var ring: FrameRing
    var cameraHealthy = false
    var framesSinceMeter = 0
    var autofocusTask: Task<AutofocusResult, Never>?
    var pendingSnapshots: [CaptureID] = []
    var isReady = false
    var storageProbed = false

    // Recording
    struct ActiveClip: Sendable {
        var recorder: Recorder?
        var files: ClipFiles
        var start: MonotonicTime
        var id: CaptureID?
        var stopAt: MonotonicTime?
        var setupError: String?
    }

    var clip: ActiveClip?
    var clipSerial = 0
    /// Clips get an audio track only while the microphone delivers.
    var micRunning = false
    var recordingSettings: RecordingSettings

    // Stills
    let stillEncoder: StillEncoder?
    let stillEncoderError: String?
    var photosInFlight = 0

    // LEDs
    let statusDriver: LEDDriver?
    let flashDriver: LEDDriver?
    var statusPatternName = "booting"
    var flashPatternName = "off"

    // Bookkeeping for status and the control socket
    var counters = ServiceStatus.Counters()
    var lastError: String?
    var lastFiles: [String] = []
    var freeBytes: UInt64?
    var origins: [CaptureID: MonotonicTime] = [:]
    /// Where each clip's first frame is, for the control socket's timing figures.
    var clipStarts: [CaptureID: MonotonicTime] = [:]

    struct CaptureOutcome: Sendable {
        var files: [String]
        var pressToDurableMs: Double
        var clipStartOffsetMs: Double?
    }
    struct Waiter {
        var id: UInt64
        var after: MonotonicTime
        var continuation: CheckedContinuation<Result<CaptureOutcome, ServiceFailure>, Never>
    }

    var waiters: [Waiter] = []
    var nextWaiterID: UInt64 = 0
    var wakeTask: Task<Void, Never>?
    var wakeAt: MonotonicTime?
    var exitContinuation: CheckedContinuation<Int32, Never>?
    var exitCode: Int32?
    var stopping = false
    var lastStatusLine = ""

    let photoQueue = DispatchQueue(label: "shutter.photo")
    let storageQueue = DispatchQueue(label: "shutter.storage")
    let clipQueue = DispatchQueue(label: "shutter.clip", attributes: .concurrent)

    public struct ServiceFailure: Error, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    public init(config: ShutterConfig, roles: BoardRoles, hooks: ServiceHooks = ServiceHooks(),
                clock: any MonotonicClock = SystemClock(), wallClock: any WallClock = SystemWallClock()) {
        self.config = config
        self.roles = roles
        self.hooks = hooks
        self.clock = clock
        self.wallClock = wallClock
        storage = Storage(config: config)
        startedAt = clock.now()
        recognizer = GestureRecognizer(settings: GestureSettings(config: config))
        machine = CaptureStateMachine(
            configuration: .init(maxRecording: .seconds(config.video.maxSeconds),
                                 flash: FlashPolicy(darkLux: config.flash.autoLux)),
            flashMode: FlashMode(config.flash.mode))
        var wd = WatchdogConfiguration()
        wd.frameTimeout = .milliseconds(config.watchdog.frameTimeoutMs)
        wd.initialBackoff = .milliseconds(config.watchdog.restartBackoffMs)
        wd.maxConsecutiveRestartFailures = config.watchdog.maxRestarts
        watchdog = WatchdogPolicy(configuration: wd, startedAt: startedAt)
        // Enough frames to reach back past the stability filter to the press.
        let period = 1000 / max(config.video.fps, 1)
        ring = FrameRing(capacity: min(4, 2 + config.button.stabilityMs / max(period, 1)))
        recordingSettings = RecordingSettings(
            videoEncoder: config.video.encoder.rawValue, preset: config.video.preset, fps: config.video.fps,
            videoBitrate: config.video.bitrateKbps * 1000, audioChannels: config.audio.channels,
            audioSampleRate: config.audio.sampleRate, audioBitrate: config.audio.bitrateKbps * 1000,
            segmentSeconds: Double(config.video.segmentSeconds))
        recordingSettings.keyframeInterval = .milliseconds(Int64(config.video.keyframeIntervalMs))
        do {
            stillEncoder = try StillEncoder(quality: config.still.quality)
            stillEncoderError = nil
        } catch {
            stillEncoder = nil
            stillEncoderError = "\(error)"
        }
        let ledLog = Log("shutter.led")
        statusDriver = roles.statusLED.map { LEDDriver(output: $0, clock: clock, log: { ledLog.warning($0) }) }
        flashDriver = roles.flashLED.map { LEDDriver(output: $0, clock: clock, log: { ledLog.warning($0) }) }
    }

    // MARK: - Run

    /// Runs until SIGTERM/SIGINT (`stop()`), a watchdog give-up or power off;
    /// returns the process exit code.
    public func run() async -> Int32 {
        log.notice("board \(roles.name); storage \(storage.root); button hold \(config.button.holdMs) ms, max clip \(config.video.maxSeconds) s")
        if let e = stillEncoderError { log.error("still encoder unavailable: \(e)") }
        await statusDriver?.show(.booting)
        if !config.storage.requireMountPoint {
            // A plain directory (make run, a test, a card mounted at boot): create it.
            // With requireMountPoint the service waits for the card instead.
            try? FileManager.default.createDirectory(atPath: storage.root, withIntermediateDirectories: true)
        }
        ClipFiles.removeLeftovers(in: storage.root)
        await recoverLastClip()
        await probeStorage()
        startInputs()
        await startCamera(reason: "start")
        scheduleWake()
        let code = await withCheckedContinuation { (c: CheckedContinuation<Int32, Never>) in
            if let code = exitCode { c.resume(returning: code) } else { exitContinuation = c }
        }
        return code
    }

    /// SIGTERM / SIGINT: finish the current file, then exit 0.
    public func stop() async {
        guard !stopping else { return }
        stopping = true
        hooks.stopping()
        log.notice("stopping: finishing the current files")
        if clip != nil {
            if let id = clip?.id {
                clip?.stopAt = clock.now()
                await finishClip(id: id)
            } else {
                dropUncommittedClip()
            }
        }
        // Let stills in flight land.
        let deadline = clock.now() + .seconds(20)
        while photosInFlight > 0, clock.now() < deadline { try? await clock.sleep(for: .milliseconds(20)) }
        await statusDriver?.stop()
        await flashDriver?.stop()
        finish(exit: 0)
    }

    func finish(exit code: Int32) {
        guard exitCode == nil else { return }
        exitCode = code
        frameTask?.cancel()
        wakeTask?.cancel()
        let c = exitContinuation
        exitContinuation = nil
        c?.resume(returning: code)
        for w in waiters { w.continuation.resume(returning: .failure(ServiceFailure(message: "shutterd is stopping"))) }
        waiters.removeAll()
    }

    private func startInputs() {
        if let button = roles.button {
            let edges = button.edges()
            Task { [weak self] in
                for await e in edges { await self?.edge(e) }
            }
        }
        if config.audio.enabled, let mic = roles.microphone {
            do {
                let chunks = try mic.start(sampleRate: config.audio.sampleRate, channels: config.audio.channels)
                micRunning = true
                Task { [weak self] in
                    for await c in chunks { await self?.audio(c) }
                    await self?.audioEnded()
                }
            } catch {
                log.warning("microphone unavailable, clips will have no sound: \(error)")
            }
        }
        // Storage probe and status refresh every few seconds.
        Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 5_000_000_000)
                guard let self, await self.exitCode == nil else { return }
                await self.probeStorage()
            }
        }
    }

    // MARK: - Button and time

    func edge(_ e: ButtonEdge) {
        let events = recognizer.feed(e)
        handle(gestures: events)
        scheduleWake()
    }

    /// Drives the simulated or virtual button from the control socket / terminal.
    func setButton(pressed: Bool) {
        if let sim = roles.sim {
            sim.button.set(pressed: pressed)
        } else {
            edge(ButtonEdge(pressed: pressed, time: clock.now()))
        }
    }

    func tick() {
        let now = clock.now()
        handle(gestures: recognizer.advance(to: now))
        if let d = machine.nextDeadline, d <= now { apply(machine.handle(.tick, at: now)) }
        evaluateWatchdog(now)
        flushStoppedClip(now)
        scheduleWake()
    }

    private func handle(gestures: [GestureEvent]) {
        let now = clock.now()
        for g in gestures {
            log.debug("gesture \(g)")
            if case .shutdownCountdown = g { log.notice("shutdown gesture: countdown started, release to cancel") }
            apply(machine.handle(.gesture(g), at: now))
        }
    }

    /// Sleeps until the earliest deadline of the recognizer, the state machine,
    /// the watchdog, or a half-second heartbeat (watchdog pings, status).
    func scheduleWake() {
        let now = clock.now()
        var next = now + .milliseconds(500)
        for d in [recognizer.nextDeadline, machine.nextDeadline, watchdog.nextDeadline, clip?.stopAt.map { $0 + .milliseconds(300) }] {
            if let d, d < next { next = max(d, now) }
        }
        if let w = wakeAt, w <= next, wakeTask != nil { return }
        wakeTask?.cancel()
        wakeAt = next
        let clock = self.clock
        wakeTask = Task { [weak self] in
            do { try await clock.sleep(until: next) } catch { return }
            await self?.woke()
        }
    }

    private func woke() {
        wakeTask = nil
        wakeAt = nil
        tick()
    }

    // MARK: - Camera

    func startCamera(reason: String) async {
        do {
            let cam: any CameraDevice
            if let c = camera { cam = c } else { cam = try await roles.openCamera() }
            camera = cam
            let frames = try await cam.start()
            log.notice("camera \(cam.info.model) started (\(reason))")
            frameTask?.cancel()
            streamGeneration += 1
            let generation = streamGeneration
            frameTask = Task { [weak self] in
                for await f in frames {
                    guard let self else { return }
                    await self.frame(f)
                }
                if Task.isCancelled { return }
                await self?.cameraStreamEnded(generation: generation)
            }
            if reason != "start" { watchdog.cameraRestartSucceeded(at: clock.now()) }
        } catch {
            cameraHealthy = false
            let absent = (error as? CameraError)?.code == .noDevice
            if lastError != "\(error)" { log.warning("camera unavailable (\(reason)): \(error)") }
            lastError = "\(error)"
            if absent && !isReady {
                // No camera at boot: wait for one, retrying quietly, never giving up
                // (the LED shows code 2; systemd sees STATUS "waiting for camera").
                watchdog = WatchdogPolicy(configuration: watchdog.configuration, startedAt: clock.now())
            } else if reason != "start" {
                watchdog.cameraRestartFailed(at: clock.now())
            }
            apply(machine.handle(.fault(.cameraLost), at: clock.now()))
            publishStatus("waiting for camera")
        }
    }

    func frame(_ f: Frame) {
        let now = clock.now()
        watchdog.frameArrived(at: now)
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
        if var c = clip, let r = c.recorder {
            if let stop = c.stopAt {
                if f.timestamp <= stop { r.append(f) }
            } else if r.append(f) {
                // The encoder took the frame: it is keeping up (a stalled encoder
                // fills its queue and stops taking frames).
                if c.id != nil { watchdog.encoderProgress(at: now) }
            } else if r.error != nil, c.setupError == nil {
                c.setupError = r.error.map { "\($0)" }
                clip = c
            }
        }
        if !pendingSnapshots.isEmpty {
            let ids = pendingSnapshots
            pendingSnapshots.removeAll()
            for id in ids { savePhoto(id: id, frame: f, flash: false) }
        }
        if let cam = camera { counters.droppedFrames = cam.droppedFrames }
    }

    func cameraStreamEnded(generation: UInt64) {
        // A stream we stopped ourselves (restart) is not a lost camera.
        guard exitCode == nil, !stopping, generation == streamGeneration else { return }
        cameraHealthy = false
        camera = nil
        log.warning("camera stream ended (unplugged or failed); will retry")
        apply(machine.handle(.fault(.cameraLost), at: clock.now()))
        publishStatus("waiting for camera")
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
            Task { await self.restartCamera() }
        case .unhealthy(.encoderStalled):
            // Finish what can be finished: end the clip (what was written stays
            // playable); the next press starts a fresh encoder.
            if clip?.id != nil, clip?.stopAt == nil {
                log.error("the video encoder stopped making progress: ending the clip")
                counters.errors += 1
                lastError = WatchdogReason.encoderStalled.message
                clip?.stopAt = now
            }
        case .waiting, .unhealthy:
            if cameraHealthy, watchdog.consecutiveFailures > 0 { cameraHealthy = false }
        case let .giveUp(reason):
            log.error("giving up: \(reason.message); exiting \(reason.exitCode) so systemd restarts the service")
            publishStatus("failed: \(reason.message)")
            finish(exit: reason.exitCode)
        }
    }

    private func restartCamera() async {
        frameTask?.cancel()
        frameTask = nil
        streamGeneration += 1
        if let cam = camera { await cam.stop() }
        ring.removeAll()
        await startCamera(reason: "restart")
    }

    // MARK: - Audio

    func audio(_ chunk: AudioChunk) {
        counters.audioOverruns = roles.microphone?.overruns ?? 0
        guard let c = clip, let r = c.recorder else { return }
        if let stop = c.stopAt, chunk.timestamp > stop { return }
        r.append(chunk)
    }

    func audioEnded() {
        micRunning = false
        guard exitCode == nil, !stopping else { return }
        log.warning("microphone stopped delivering sound: clips continue without audio")
    }

    // MARK: - Storage

    /// A clip open when the power went (or the process was killed inside a write)
    /// may end in a partial fragment: cut it back to its last whole one.
    private func recoverLastClip() async {
        let dcim = storage.dcim
        let log = self.log
        await Blocking.run(on: storageQueue) {
            guard let e = FileManager.default.enumerator(atPath: dcim) else { return }
            let clips = e.compactMap { $0 as? String }.filter { $0.hasSuffix(".MP4") }.sorted()
            guard let last = clips.last else { return }
            let path = (dcim as NSString).appendingPathComponent(last)
            // A name reserved just before a crash, never written: nothing to keep (its
            // number stays used, the counter is ahead of it).
            if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size == 0 {
                unlink(path)
                log.notice("removed \(path): an empty clip left by a crash")
                return
            }
            do {
                let cut = try FragmentedMP4Recovery.truncateToLastWholeFragment(path: path)
                if cut > 0 { log.notice("repaired \(path): cut \(cut) bytes of an unfinished fragment") }
            } catch {
                log.warning("could not check \(path) for an unfinished fragment: \(error)")
            }
        }
    }

    func probeStorage() async {
        let storage = self.storage
        let result: Result<FileSystemSpace, StorageError> = await Blocking.run(on: storageQueue) {
            do {
                // Healthy means a photo fits too: a full card keeps its LED code
                // until space is freed (with delete-oldest-videos this makes room).
                _ = try storage.ensureSpace(for: .photo)
                return .success(try storage.checkHealth())
            } catch let e as StorageError { return .failure(e) } catch {
                return .failure(StorageError(.ioError, "\(error)"))
            }
        }
        let now = clock.now()
        storageProbed = true
        switch result {
        case .success(let space):
            freeBytes = space.availableBytes
            watchdog.storageOK(at: now)
            if case .storageUnavailable = machine.state { apply(machine.handle(.storageRestored, at: now)) }
            becomeReadyIfPossible()
            if isReady { publishStatus(readyStatusLine()) }
        case .failure(let e):
            watchdog.storageFailed(at: now)
            if lastError != e.message { log.warning("storage: \(e.message)") }
            lastError = e.message
            if case .storageUnavailable = machine.state {} else {
                apply(machine.handle(.fault(CaptureFault(e)), at: now))
            }
            becomeReadyIfPossible()
            publishStatus("storage problem: \(e.message)")
        }
    }

    private func becomeReadyIfPossible() {
        // A full or missing card does not hold READY back: the service is up and
        // shows the storage code; it recovers when the card does.
        guard !isReady, cameraHealthy, storageProbed else { return }
        isReady = true
        apply(machine.handle(.ready, at: clock.now()))
        let line = readyStatusLine()
        log.notice(line)
        lastStatusLine = line
        hooks.ready(line)
    }

    func readyStatusLine() -> String {
        var s = "ready, \(counters.photos) photo\(counters.photos == 1 ? "" : "s"), \(counters.clips) clip\(counters.clips == 1 ? "" : "s")"
        if let f = freeBytes { s += String(format: ", %.1f GB free", Double(f) / 1e9) }
        return s
    }

    func publishStatus(_ line: String) {
        guard line != lastStatusLine else { return }
        lastStatusLine = line
        hooks.status(line)
    }
}

extension GestureSettings {
    public init(config: ShutterConfig) {
        self.init(stabilityMs: Int64(config.button.stabilityMs), holdMs: Int64(config.button.holdMs),
                  doubleTapMs: Int64(config.button.doubleTapMs), maxHoldMs: Int64(config.video.maxSeconds) * 1000,
                  shutdownTaps: config.shutdown.taps, shutdownGapMs: Int64(config.shutdown.gapMs),
                  shutdownCountdownMs: Int64(config.shutdown.countdownMs))
    }
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
