// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterMedia
import ShutterStorage

/// The service, as one loop (the model is rpicam-apps' `RPiCamApp::Wait()`):
/// events come in one at a time (`handle`), in the order they happened; each is
/// handled synchronously — read the state, feed the gesture recognizer and the
/// capture state machine, start what they decide — and never waits in the
/// middle of a decision, so nothing re-enters it. Slow work leaves as a job
/// (`Jobs`) and comes back as an event with its result.
///
/// The loop only routes. Each path owns its state, in its own file:
/// - `ButtonPath`: edges to gestures;
/// - `PhotoPath`: the tap, both moments;
/// - `ClipSession`: the hold;
/// - `CameraControlPlane`: settings, focus point, camera switch and restart;
/// - `Health`: watchdog, READY/STATUS, the card;
/// - `RequestBook`: which request waits for which capture;
/// - `CardFiles`: listing and deleting the card's files;
/// - `IntervalCapture`: the interval's slots, each a tap's photo;
/// - `TimelapsePath`: a time-lapse film made of the card's photos, off the loop;
/// - `TriggerPath`: the trigger inputs, each activation a photo, a burst or a clip;
/// - `LiveReport`: what live watchers are told.
final class ServiceLoop {
    let ctx: ServiceContext
    let jobs: Jobs
    var machine: CaptureStateMachine
    var requests = RequestBook()
    let button: ButtonPath
    let photo: PhotoPath
    let clip: ClipSession
    let control: CameraControlPlane
    let health: Health
    let files: CardFiles
    let interval: IntervalCapture
    let timelapse: TimelapsePath
    let triggers: TriggerPath
    var journal = Journal()
    let live: LiveReport
    /// The last few video frames by reference: the press frame has passed by the time a press is known.
    var recent: RecentFrames
    let leds: LEDs
    let preview: (any FrameViewers)?
    var stopping: Stopping?
    /// Told every action the capture machine decides, in order, before it is carried out:
    /// the service logs it (debug level); a test feeding the loop a recorded list of
    /// events reads them out (LoopReplayTests).
    let reportAction: (CaptureAction) -> Void

    /// `buttonEventsWaiting`: whether button events wait in the inbox (the loop's own
    /// `Inbox`; true, the safe answer, where there is none). `post`: into the inbox.
    init(ctx: ServiceContext, supervisor: CameraSupervisor, leds: LEDs, preview: (any FrameViewers)?,
         reloadConfig: (@Sendable () throws(ConfigError) -> ShutterConfig)?,
         reportAction: @escaping (CaptureAction) -> Void,
         buttonEventsWaiting: @escaping () -> Bool = { true },
         triggerEventsWaiting: @escaping () -> Bool = { true },
         post: @escaping @Sendable (ServiceEvent) -> Void = { _ in }) {
        jobs = Jobs(post: post)
        self.ctx = ctx
        self.reportAction = reportAction
        self.leds = leds
        self.preview = preview
        let c = ctx.config
        machine = CaptureStateMachine(
            configuration: .init(maxRecording: .seconds(c.video.maxSeconds),
                                 flash: FlashPolicy(darkLux: c.flash.autoLux), stillMoment: c.still.moment))
        button = ButtonPath(config: c, button: ctx.roles.button, log: ctx.log, eventsWaiting: buttonEventsWaiting)
        live = LiveReport(events: ctx.live)
        photo = PhotoPath(ctx: ctx, jobs: jobs, leds: leds)
        clip = ClipSession(ctx: ctx, jobs: jobs)
        control = CameraControlPlane(ctx: ctx, jobs: jobs, supervisor: supervisor, live: live, reloadConfig: reloadConfig)
        health = Health(ctx: ctx, jobs: jobs, supervisor: supervisor)
        files = CardFiles(ctx: ctx, jobs: jobs)
        interval = IntervalCapture(ctx: ctx, jobs: jobs)
        timelapse = TimelapsePath(ctx: ctx, jobs: jobs)
        triggers = TriggerPath(config: c, roles: ctx.roles.triggers, wallClock: ctx.wallClock, live: live,
                               eventsWaiting: triggerEventsWaiting)
        // Enough frames to reach back past the stability filter to the press.
        let period = 1000 / max(c.video.fps, 1)
        recent = RecentFrames(capacity: min(4, 2 + c.button.stabilityMs / max(period, 1)))
    }

    /// Set once the service stops: the exit code, and when it must be gone by.
    struct Stopping {
        var exitCode: Int32
        /// Past this the service exits with whatever is not finished (below systemd's stop timeout).
        var deadline: MonotonicTime
        var lastExtension: MonotonicTime?
    }

    /// The process's exit code once the loop is done: stopping and no job left.
    var exitCode: Int32? {
        guard let s = stopping else { return nil }
        if jobs.inFlight == 0 { return s.exitCode }
        if ctx.now >= s.deadline {
            ctx.log.error("stopping: \(jobs.inFlight) job(s) still running after \(Self.stopBound) s; exiting without them")
            return s.exitCode
        }
        return nil
    }

    /// How long a stop may take in the process; systemd's TimeoutStopSec (30 s) is above it.
    static let stopBound = 25
    /// A clip still finalising may take longer: systemd's timeout is extended in
    /// steps (EXTEND_TIMEOUT_USEC) up to this.
    static let stopBoundWithClip = 120

    // MARK: - Events

    /// One event, start to end. Never suspends.
    func handle(_ event: ServiceEvent) {
        switch event {
        case .button(let e):
            feed(button.event(e))
        case let .trigger(line, e):
            triggers.event(line, e, now: ctx.now)
        case .terminalButton(let pressed):
            if !ctx.roles.pressSimButton(pressed) {
                feed(button.edge(ButtonEdge(pressed: pressed, time: ctx.now)))
            }
        case .frame(let f):
            frame(f)
        case .camera(let e):
            camera(e)
        case .request(let r, let reply):
            request(r, reply)
        case .command(let c):
            _ = submit(c)
        case .signal(let s):
            signal(s)
        case .tick:
            tick()
        case .microphone(let running):
            clip.micRunning = running
        case .done(let result):
            jobs.finished()
            done(result)
        case .flashLit(let id):
            photo.flashLit(id)
        case let .deletedByPolicy(paths, why):
            for path in paths {
                ctx.log.notice("deleted \(path) \(why)")
                journal.lastFiles.removeAll { $0 == path }
                live.deleted(path: path)
            }
        case .partTrouble(let name, let what):
            give(trouble: name, what)
        case let .uploadReport(report, events):
            uploaded(report, events)
        case .timelapse(let progress):
            timelapse.progress(progress)
        }
        settle()
    }

    /// After every event: what waited for the captures to end goes on, requests
    /// whose press made nothing are answered.
    private func settle() {
        let now = ctx.now
        photo.tidy(now: now, patience: health.watchdog.pace.patience(PhotoPath.pinTimeout)) { machine.isPending($0) }
        requests.answerUnbound(isPending: machine.isPending)
        triggersAsk()
        for effect in control.operations.resume(betweenCaptures: betweenCaptures, cameraHealthy: cameraWell, now: now) {
            switch effect {
            case .machine(let input):
                give(input)
            case .reopening(let status):
                // Captures wait while no camera streams; the first frame restores them.
                recent.removeAll()
                health.reopenBegan()
                cameraLost()
                health.publish(status)
            }
        }
    }

    /// When the loop must look again: the earliest deadline of every part (the
    /// watchdog's half-second heartbeat is one).
    var nextWake: MonotonicTime {
        var next = health.nextDeadline
        for d in [button.nextDeadline, machine.nextDeadline, clip.nextDeadline, requests.nextDeadline,
                  control.operations.nextDeadline, interval.nextDeadline, triggers.nextDeadline, LiveReport.nextSecond(of: machine.recordingSpan, after: ctx.now)] {
            if let d, d < next { next = d }
        }
        // Not clamped to now: a deadline that stays due keeps its time, so the inbox can
        // tell it was ticked already (and let events go first) from one newly due.
        return next
    }

    /// No photo, press, clip or snapshot in progress.
    var betweenCaptures: Bool {
        guard clip.isIdle, photo.isIdle, machine.inProgress.isEmpty else { return false }
        switch machine.state {
        case .idle, .booting, .cameraUnavailable, .storageUnavailable: return true
        default: return false
        }
    }

    private func tick() {
        let now = ctx.now
        feed(button.tick(now: now))
        if let d = machine.nextDeadline, d <= now { give(.tick) }
        requests.expire(now: now, lastError: journal.lastError)
        if machine.recordingSpan != nil { reportState() }  // the recording's seconds
        health.probeStorageIfDue(now: now)
        watchdog(now)
        clip.finishIfStopped(now: now, lastFrame: nil)
        intervalTick()
        triggers.tick(now: now)
        if let s = stopping, !clip.isIdle, s.lastExtension.map({ now - $0 >= .seconds(5) }) ?? true,
           now < s.deadline {
            // A long clip is still being finalised: systemd waits 10 s more each time.
            stopping?.lastExtension = now
            ctx.hooks.extendTimeout(.seconds(10))
        }
    }

    func feed(_ gestures: [GestureEvent]) {
        for g in gestures {
            if case .tap(let s, let e) = g { photo.noteTap(start: s, end: e) }
            live.gesture(g)
            give(.gesture(g))
        }
    }

    // MARK: - Frames and the camera

    private func frame(_ f: Frame) {
        if control.operations.reopening { return }  // the camera being stopped: not the one to come
        let now = ctx.now
        control.inUse.frameArrived(f)
        let exposure = f.metadata.exposureTimeMicroseconds.map { Duration.microseconds(Int64($0)) }
        let wasWell = cameraWell
        health.frameArrived(now: now, exposure: exposure, wasWell: wasWell, lastError: journal.lastError)
        if !wasWell {
            // Clears a no-camera fault latched while booting or running.
            give(.cameraRestored)
            becomeReadyIfPossible()
        }
        recent.push(f)
        if recent.pushed % 10 == 0 { give(.sceneMetered(f.metadata)) }
        let info = control.inUse.camera?.info
        photo.frameArrived(f, frames: recent.all, camera: info)
        if clip.wantsFrames { clip.offer(f) }
        preview?.offer(f, now: now, recording: clip.recordingID)
        ctx.video?.offer(f, now: now)
        // The time stamp's next second rendered ahead (its queue), for the press's photo too.
        if let o = ctx.overlay { o.prepare(at: f.exposureStart, sizes: Self.sizes(f)) }
        if let t = clip.recorder.progress.lastAccepted, clip.recordingID != nil { health.encoderProgress(at: t) }
        clip.finishIfStopped(now: now, lastFrame: f.timestamp)
    }

    /// A frame's size and its still-stream companion's.
    private static func sizes(_ f: Frame) -> [(width: Int, height: Int)] {
        [(f.width, f.height)] + (f.companion.map { [($0.width, $0.height)] } ?? [])
    }

    private func camera(_ event: CameraSupervisor.Event) {
        switch event {
        case let .started(camera, target, restart):
            control.started(camera, target, restart: restart)
            live.cameraStarted(camera.info)
            health.cameraStarted(restart: restart)
        case let .unavailable(error, restart):
            let absent = (error as? CameraError)?.code == .noDevice
            if journal.lastError != "\(error)" { ctx.log.warning("camera unavailable: \(error)") }
            journal.lastError = "\(error)"
            health.cameraUnavailable(absent: absent, restart: restart)
            cameraStopped()
            reportState()  // the error it names
        case .lost:
            guard stopping == nil else { return }
            ctx.log.warning("camera stream ended (unplugged or failed); will retry")
            cameraStopped()
            health.publish("waiting for camera")
        case let .reopened(op, outcome):
            health.reopenEnded()
            control.operations.reopened(op: op, outcome, now: ctx.now)
        }
    }

    private func watchdog(_ now: MonotonicTime) {
        switch health.evaluate(now: now) {
        case .restartCamera:
            if cameraWell { cameraLost() }  // a camera that never delivered keeps the start's LED
            recent.removeAll()
            health.restartCamera(control.inUse.target)  // the camera in use, with the controls it has
        case .unhealthy(.encoderStalled):
            // Finish what can be finished: end the clip (what was written stays
            // playable); the next press starts a fresh encoder.
            if let id = clip.recordingID, clip.current?.stopAt == nil {
                ctx.log.error("the video encoder stopped making progress: ending the clip")
                journal.error(WatchdogReason.encoderStalled.message)
                clip.stop(id, at: now)
            }
        case .giveUp(let reason):
            stop(exitCode: reason.exitCode)
        default:
            break
        }
    }

    private func becomeReadyIfPossible() {
        if health.becomeReadyIfPossible(line: readyLine, cameraWell: cameraWell) { give(.ready) }
    }

    /// Frames have come since the start and none was missed since: the machine's
    /// `cameraLost` fault is the one record of a camera that stopped.
    var cameraWell: Bool { health.framesSeen && !machine.cameraLost }

    /// No frames for now (a stopped stream, a reopen, a failed start or restart):
    /// captures are refused with the camera's code until a frame comes.
    private func cameraLost() {
        if !machine.cameraLost { give(.fault(.cameraLost)) }
    }

    /// The camera stopped or could not start: `CameraInUse` forgets it (its controls, its
    /// metadata) and captures are refused until a frame comes.
    private func cameraStopped() {
        control.inUse.lost()
        cameraLost()
    }

    private var readyLine: String { health.readyLine(photos: photo.photos, clips: clip.clips) }

    // MARK: - The machine's actions

    /// The one way into the capture state machine: the input, with the lights in force
    /// (the runtime settings own them), and what it decides performed at once.
    func give(_ input: CaptureInput) {
        let actions = machine.handle(input, at: ctx.now, lights: control.asked.lights)
        reportState()
        for a in actions { perform(a) }
    }

    /// Live watchers are told the state when what it says changed.
    /// A part's trouble: the last error, and counted.
    /// The uploader reported: kept for `status.upload`; what happened goes to the live events.
    func uploaded(_ report: UploadReport, _ events: [LiveEvent]) {
        journal.upload = report
        live.relay(events)
    }

    func give(trouble part: String, _ what: String) {
        journal.error("\(part): \(what)")
    }

    private func reportState() {
        live.state(.init(state: machine.state, recording: machine.recordingSpan, lastError: journal.lastError), at: ctx.now)
    }

    private func perform(_ action: CaptureAction) {
        let now = ctx.now
        reportAction(action)
        switch action {
        case .startAutofocus:
            photo.startAutofocus(camera: control.inUse.camera)
        case .startSpeculativeClip(let from):
            clip.begin(from: from, kept: recent.frames(from: from), camera: control.inUse.camera?.info)
        case .discardSpeculativeClip:
            if let n = clip.discard() { photo.clipDiscarding(n) }
        case let .pinPressFrame(origin, at):
            photo.pin(origin, at: at, frames: recent.all, camera: control.inUse.camera?.info)
        case let .takePhoto(id, origin, pressedAt, flash, moment):
            requests.bind(origin, to: id)
            interval.bound(origin, to: id)
            triggers.bound(origin, to: id)
            photo.take(id: id, origin: origin, pressedAt: pressedAt, flash: flash, moment: moment,
                       camera: control.inUse.camera)
        case let .takeVideoSnapshot(id, origin, at):
            requests.bind(origin, to: id)
            triggers.bound(origin, to: id)
            photo.snapshot(id: id, origin: origin, at: at)
        case let .startRecording(id, origin, from, _):
            requests.bind(origin, to: id)
            triggers.bound(origin, to: id)
            health.encoderStarted()
            clip.commit(id: id, from: from, kept: recent.frames(from: from), camera: control.inUse.camera?.info)
        case let .stopRecording(id, at):
            clip.stop(id, at: min(at, now))
        case let .answers(origin, id):
            requests.bind(origin, to: id)
            interval.bound(origin, to: id)
        case .led(let indication):
            leds.show(indication)
        case .flashLED(let indication):
            leds.show(indication)
        case let .refused(why, origin):
            journal.refusedPresses += 1
            let message = refusalMessage(why)
            ctx.log.info("\(origin) refused: \(message)")
            interval.refused(origin, why: message)
            triggers.refused(origin, why: message)
            requests.answer(origin, .refused(message, busy: why == .busy || why == .alreadyRecording))
        case .failed(let e):
            journal.error(e.message)
            ctx.log.warning("capture failed: \(e.message)")
        case .probeStorage:
            health.probeStorageIfDue(now: now, force: true)
        case .flashModeChanged(let m):
            ctx.log.notice("flash mode: \(m.rawValue)")
            control.flashModeChanged(to: m)
        case .powerOff:
            ctx.log.notice("shutdown gesture: every file is saved; asking the system to power off")
            // The request (sync + systemctl) is a job: the service exits once it is made.
            let powerOff = ctx.hooks.powerOff
            jobs.add {
                await powerOff()
                return .nothing
            }
            stop(exitCode: 0)
        }
    }

    /// "busy: saving SHTR0012.MP4", "not ready: the camera is starting"...
    private func refusalMessage(_ r: CaptureRefusal) -> String {
        switch r {
        case .busy: return "busy: \(inProgressText), and one request is already waiting"
        case .alreadyRecording: return "busy: already \(inProgressText)"
        case .notReady: return "not ready: the camera is starting"
        // A stalled camera sets no error of its own: the code's meaning, not "error code 2".
        case .fault(let code): return "refused: \(journal.lastError ?? code.meaning)"
        case .shuttingDown: return "refused: shutting down"
        case .notRecording: return "not recording"
        }
    }

    /// "saving a photo", "recording SHTR0004.MP4": the machine's captures in progress, in words.
    var inProgressText: String {
        let doing = machine.inProgress.map { c -> String in
            switch c.activity {
            case .photo(.press): return "saving a photo"
            case .photo(.focused): return "taking a photo"
            case .videoSnapshot: return "taking a photo from the video"
            case .recording: return clip.name(of: c.id).map { "recording \($0)" } ?? "recording"
            case .finalising: return "saving \(clip.name(of: c.id) ?? "a clip")"
            }
        }
        return doing.isEmpty ? "a capture is in progress" : doing.joined(separator: ", ")
    }

    // MARK: - Jobs back

    private func done(_ result: JobResult) {
        let now = ctx.now
        switch result {
        case .nothing:
            break
        case .storageProbed(let r):
            if let input = health.storageProbed(r, state: machine.state, journal: &journal) {
                give(input)
            }
            becomeReadyIfPossible()
            if case .success = r, health.isReady { health.publish(readyLine) }
        case .photo(let o):
            photo.back(o).forEach(photoDone)
        case .clipDiscarded(let n):
            photo.clipDiscarded(n).forEach(photoDone)
        case .autofocused(let n, _):
            photo.autofocused(n)
        case let .pressEncoded(origin, serial, r):
            photo.encoded(origin, serial: serial, r)
        case let .stillCaptured(id, r):
            photo.stillCaptured(id, r)
        case let .clipCommitted(id, r):
            let input = clip.committed(id, r)
            switch r {
            case .success(let (path, _)):
                requests.started(id, path: path)
            case .failure(let e):
                health.encoderStopped()
                _ = triggers.finished(id, ok: false, now: now)
                requests.resolve(id, .failure(e), at: now)
            }
            if let input { give(input) }
        case let .clipFinished(id, start, outcome):
            health.encoderStopped()
            let (input, files, error) = clip.finished(id, outcome)
            if let error { journal.error(error) }
            let saved: [String]
            if case .success(let paths) = files { saved = paths } else { saved = [] }
            let trigger = triggers.finished(id, ok: !saved.isEmpty, now: now)
            if !saved.isEmpty {
                journal.lastFiles = saved
                live.saved(saved, source: trigger == nil ? nil : "trigger", trigger: trigger)
            }
            give(input)
            if case .success(let paths) = files, !paths.isEmpty {
                // The machine is idle again; the request's reply waits for the files' final
                // form: the poster written beside the first, then each made a regular MP4.
                let storage = ctx.storage, log = ctx.log, reached = ctx.hooks.finishReached
                let preview = error == nil ? self.preview : nil
                jobs.run(on: ClipFinisher.queue) {
                    preview?.savePoster(for: id, beside: paths[0])
                    let problems = ClipFinisher.finish(paths, storage: storage, log: log, reached: reached)
                    return .clipRegular(id, start: start, files: paths, problems: problems)
                }
            } else {
                requests.resolve(id, files, at: now, clipStart: start)
            }
            if health.isReady { health.publish(readyLine) }
        case let .clipRegular(id, start, paths, problems):
            for p in problems { journal.error(p) }
            requests.resolve(id, .success(paths), at: now, clipStart: start)
        case .intervalSaved(let problem):
            interval.saved(problem: problem)
        case .timelapseMade(let result):
            timelapse.made(result)
        case .controlsApplied:
            control.inUse.controlsApplied(now: now)
        case let .settingsSaved(op, note):
            control.operations.saved(op: op, problem: note)
        case .configReread(let r):
            _ = control.reread(r)
        case let .camerasListed(op, r):
            control.listed(op: op, r, cameraHealthy: cameraWell)
        case let .focused(op, r):
            control.operations.focused(op: op, r)
        case let .filesListed(op, items):
            files.listed(op: op, items)
        case let .newestFile(op, newest):
            files.newestFound(op: op, newest, inProgress: betweenCaptures ? nil : inProgressText,
                              saved: photo.photos + clip.clips)
        case let .deleted(op, number, outcome, item):
            if let path = files.deleted(op: op, number, outcome, item) {
                // The one place a deletion completes: watchers are told here.
                journal.lastFiles.removeAll { $0 == path }
                live.deleted(path: path)
            }
        }
    }

    /// A photo is saved (or failed) and its press's clip gone: the machine, the journal
    /// and whoever waits are told.
    private func photoDone(_ o: PhotoPath.Outcome) {
        let (input, report) = photo.saved(o)
        let ok = (try? o.result.get()) != nil
        let fromInterval = interval.finished(o.id, ok: ok)
        let trigger = triggers.finished(o.id, ok: ok, now: ctx.now)
        switch o.result {
        case .success(let saved):
            journal.lastFiles = [saved.path]
            live.saved([saved.path], source: fromInterval ? "interval" : trigger == nil ? nil : "trigger", trigger: trigger)
            control.inUse.photoSaved()
        case .failure(let e):
            journal.error(e.message)
        }
        give(input)
        requests.resolve(o.id, o.result.map { [$0.path] }, at: ctx.now, photo: report)
        if health.isReady { health.publish(readyLine) }
    }

    // MARK: - Signals and stopping

    private func signal(_ s: ServiceSignal) {
        switch s {
        case .photo: submit(.photo)
        case .toggleRecording: submit(isRecording ? .recordStop : .recordStart(stopAfter: nil))
        case .stop: stop(exitCode: 0)
        case .reload: control.reload()
        }
    }

    private var isRecording: Bool {
        if case .recording = machine.state { return true }
        return false
    }

    /// SIGTERM / SIGINT, the shutdown gesture, a watchdog give-up: finish the current file, then exit.
    private func stop(exitCode: Int32) {
        guard stopping == nil else { return }
        let now = ctx.now
        let bound = clip.recordingID == nil ? Self.stopBound : Self.stopBoundWithClip
        stopping = Stopping(exitCode: exitCode, deadline: now + .seconds(bound))
        ctx.hooks.stopping()
        ctx.log.notice("stopping: finishing the current files")
        photo.failUnchosenPins()
        if !clip.isIdle {
            // A clip is finalised before the exit: systemd waits longer, in steps, while it is.
            stopping?.lastExtension = now
            ctx.hooks.extendTimeout(.seconds(10))
        }
        clip.stopForShutdown(now: now)
        control.operations.failAll("shutterd is stopping")
        timelapse.cancel("shutterd is stopping")
    }

    /// The loop is done: every waiting client is told.
    func finish() {
        requests.answerAll(.failed("shutterd is stopping"))
    }

    /// Clips a kill or power cut left fragmented (the start found them): made regular MP4s
    /// as one job, after the loop runs; stopping waits for it as for any job.
    func finishRecovered(_ paths: [String]) {
        guard !paths.isEmpty else { return }
        let storage = ctx.storage, log = ctx.log, reached = ctx.hooks.finishReached
        jobs.run(on: ClipFinisher.queue) {
            _ = ClipFinisher.finish(paths, storage: storage, log: log, reached: reached)
            return .nothing
        }
    }
}
