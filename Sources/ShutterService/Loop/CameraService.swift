// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ShutterCore
import ShutterMedia
import ShutterStorage
import Synchronization

/// The running camera, as the rest of the process sees it: a place to post
/// events (`handle`, `stop`, the parts) and `run`, which owns the one task
/// group everything runs in. Inside, `ServiceLoop` takes the events one at a
/// time; this type only carries them and the jobs the loop decides.
///
/// `run`, in order: the card is prepared, the remembered settings and camera
/// are read, then the services start — the camera supervisor, the button, the
/// microphone, the timer, the signals, and the parts (control socket, web page,
/// terminal) in the order given — and the loop takes events until it is done.
/// Then the parts stop in reverse, the group is cancelled, the LEDs go off.
public final class CameraService: Sendable {
    let ctx: ServiceContext
    /// The loop's one queue; its wait is the loop's timer.
    private let inbox: Inbox
    private let supervisor: CameraSupervisor
    private let preview: (any FrameViewers)?
    private let reloadConfig: (@Sendable () throws(ConfigError) -> ShutterConfig)?
    /// Set as the parts are stopped: a part's `run` ending then is no failure.
    private let partsStopping = Atomic<Bool>(false)
    /// Set once the loop is done: the status it ended with. A request after that
    /// is answered at once (nobody takes events any more).
    private let ended = Mutex<ServiceStatus?>(nil)
    private let returned = Mutex<Int32?>(nil)

    /// `reloadConfig`: loads the configuration again as at start, for SIGHUP.
    /// `preview`: the web page's live preview and clip posters, when the page is on.
    public convenience init(config: ShutterConfig, roles: BoardRoles, hooks: ServiceHooks,
                            clock: any MonotonicClock = SystemClock(), wallClock: any WallClock = SystemWallClock(),
                            reloadConfig: (@Sendable () throws(ConfigError) -> ShutterConfig)? = nil) {
        self.init(config: config, roles: roles, hooks: hooks, clock: clock, wallClock: wallClock,
                  reloadConfig: reloadConfig, preview: nil)
    }

    init(config: ShutterConfig, roles: BoardRoles, hooks: ServiceHooks, clock: any MonotonicClock,
         wallClock: any WallClock, reloadConfig: (@Sendable () throws(ConfigError) -> ShutterConfig)?,
         preview: (any FrameViewers)?, live: LiveVideo? = nil, overlay: TextOverlay? = nil) {
        var ctx = ServiceContext(config: config, roles: roles, clock: clock, wallClock: wallClock,
                                 storage: Storage(config: config, cardSync: hooks.cardSync), hooks: hooks, log: Log("shutter.service"),
                                 startedAt: clock.now())
        ctx.video = live
        ctx.overlay = overlay
        overlay?.count(in: ctx.work)  // its renders ahead: work a manual-clock test waits for
        self.ctx = ctx
        inbox = Inbox(clock: clock)
        supervisor = CameraSupervisor(open: roles.openCamera)
        self.preview = preview
        self.reloadConfig = reloadConfig
    }

    public var storage: Storage { ctx.storage }
    /// The service's live events (`/api/events`, `shutterctl events`).
    public var events: LiveEvents { ctx.live }

    // MARK: Posting

    func post(_ event: ServiceEvent) {
        if let last = ended.withLock({ $0 }) {
            if case .request(_, let reply) = event {
                var r = ControlReply.failure("shutterd is stopping")
                r.status = last
                reply.send(r)
            }
            return
        }
        if case .request(let r, var reply) = event, reply.arrivedAt == nil {
            reply.arrivedAt = ctx.now
            inbox.post(.request(r, reply))
        } else {
            inbox.post(event)
        }
    }

    /// A request as the protocol spells it, answered once the loop has an answer for it.
    public func handle(_ request: ControlRequest) async -> ControlReply {
        switch ServiceCommand.decode(request) {
        case .failure(let refusal): return refusal.reply
        case .success(let command): return await handle(command)
        }
    }

    /// A command, answered once the loop has an answer for it.
    func handle(_ command: ServiceCommand) async -> ControlReply {
        await withCheckedContinuation { c in
            post(.request(command, Reply { c.resume(returning: $0) }))
        }
    }

    public func status() async -> ServiceStatus {
        // Every reply to `status` carries one, the last one too.
        await handle(.status).status!
    }

    /// SIGTERM / SIGINT: finish the current file, then `run` returns 0.
    public func stop() { post(.signal(.stop)) }

    // MARK: Running

    /// Runs until `stop()` (SIGTERM/SIGINT), a watchdog give-up or power off;
    /// returns the process exit code. `signals` are handled in the order they come.
    ///
    /// Work in flight (`ctx.work`): this task holds the loop's token (given back while the
    /// inbox waits), each job and each service of the group (supervisor, microphone,
    /// parts) its own, from when it is started until it ends; the LEDs' changes, the
    /// queues and the encoder threads count theirs. What counts: work that ends without
    /// the clock (CPU, I/O). What does not: waits only the clock or another ends (asleep on
    /// the clock, a frame to come, a result, a post): those give their token back while
    /// they wait (aware waits: the inbox, `Wakeup`, the clock's sleep, a
    /// simulated device's call) and get it again from whoever wakes them.
    public func run(signals: AsyncStream<ServiceSignal>? = nil, parts: [any ServicePart] = []) async -> Int32 {
        let token = ctx.work.token()
        defer { token.end() }
        let code = await token.run { await serve(signals: signals, parts: parts) }
        returned.withLock { $0 = code }
        return code
    }

    /// What `run` returned, once it has. Set while its work still counts as in flight, so a
    /// test that waits for none in flight sees the exit with no hop of its own in between.
    var exited: Int32? { returned.withLock { $0 } }

    private func serve(signals: AsyncStream<ServiceSignal>?, parts: [any ServicePart]) async -> Int32 {
        let config = ctx.config, roles = ctx.roles, log = ctx.log
        let board = config.board.description.isEmpty ? roles.name : "\(roles.name) (\(config.board.description))"
        log.notice("board \(board); storage \(ctx.storage.root); button hold \(config.button.holdMs) ms, max clip \(config.video.maxSeconds) s")
        ctx.hooks.status("starting on \(board)")
        let leds = LEDs(roles: roles, clock: ctx.clock, work: ctx.work)
        await leds.status?.show(.booting)
        let unfinished = await Health.prepareStorage(ctx)
        let inbox = self.inbox
        let loop = ServiceLoop(ctx: ctx, supervisor: supervisor, leds: leds, preview: preview, reloadConfig: reloadConfig,
                               reportAction: { log.debug("action \($0)") },
                               buttonEventsWaiting: { inbox.buttonEventsWaiting },
                               triggerEventsWaiting: { inbox.triggerEventsWaiting }, post: { inbox.post($0) })
        ctx.storage.onPolicyDeletion { [weak self] in self?.post(.deletedByPolicy($0, why: $1)) }
        loop.finishRecovered(unfinished)
        if let e = loop.photo.taker.unavailableReason { log.error("still encoder unavailable: \(e)") }
        let pick = await loop.control.load()
        await loop.interval.load()
        loop.triggers.describe()
        // The control plane owns which camera runs with what; the supervisor is told.
        let first = loop.control.firstTarget(index: await rememberedCamera(pick))
        var exitCode: Int32 = 0
        // A discarding group: a child's task is freed when it ends. A plain task group
        // keeps every finished child until `next()` takes it, and nothing here does:
        // each job (an encode, a write, an LED change) leaked ~1-8 KB, ~64 KB a tap.
        let work = ctx.work
        await withDiscardingTaskGroup { group in
            /// A child that counts as work in flight from now (the loop decided it) until it ends.
            func start(_ body: @escaping @Sendable () async -> Void) {
                let token = work.token()
                group.addTask {
                    await token.run { await body() }
                    token.end()
                }
            }
            let supervisor = self.supervisor
            // Frames and edges go from the device's own queue into the inbox: one hop to the loop.
            let inbox = self.inbox
            start {
                await supervisor.run(first: first, events: { self.post(.camera($0)) }, frames: { camera in
                    let depth = camera.streamDepth
                    return FrameSink(deliver: { inbox.post(frame: $0, depth: depth) }, ended: {})
                })
            }
            roles.button?.deliver { inbox.post(button: $0) }
            for (i, t) in roles.triggers.enumerated() { t.input?.deliver { inbox.post(trigger: i, $0) } }
            let recorder = loop.clip.recorder
            start { await self.microphone(into: recorder) }
            // Not counted: it waits for the loop's changes; each change counts itself (LEDs).
            group.addTask { await leds.play(post: { self.post($0) }) }
            if let signals {
                // Not counted: it waits for the process's signals (a test posts its own: InProcessRig).
                group.addTask { for await s in signals { self.post(.signal(s)) } }
            }
            // Started in order before the first event; each then runs under the parts' policy.
            for part in parts {
                let started = part.start(self)
                start { await self.supervise(part, started: started) }
            }
            // Each job's result is posted before its work ends: the loop's token is taken first.
            func startJobs() {
                for job in loop.jobs.take() {
                    switch job {
                    case .task(let body): start { self.post(.done(await body())) }
                    case .queue(let queue, let body):
                        work.begin()
                        queue.async {
                            self.post(.done(body()))
                            work.end()
                        }
                    }
                }
            }
            // Jobs decided before the first event (finishing clips a crash left).
            startJobs()
            // The loop's wait is its timer: the next deadline is the wait's argument.
            while let event = await inbox.next(until: loop.nextWake) {
                loop.handle(event)
                startJobs()
                if let code = loop.exitCode {
                    exitCode = code
                    break
                }
            }
            partsStopping.store(true, ordering: .sequentiallyConsistent)
            var partsStopped = false
            if loop.jobs.inFlight > 0 {
                // Past the stop bound: work that does not end (a write on a dead card) holds no
                // one. The daemon's hook exits here; one that returns waits for the work.
                for part in parts.reversed() { part.stop() }
                partsStopped = true
                ctx.hooks.exitWithoutWaiting(exitCode)
            }
            ended.withLock { $0 = loop.status }
            loop.finish()
            // Requests that came in behind the last event are told it stopped.
            inbox.close()
            while let event = await inbox.next(until: .init(nanoseconds: .max)) {
                if case .request(_, let reply) = event {
                    var r = ControlReply.failure("shutterd is stopping")
                    r.status = ended.withLock { $0 }
                    reply.send(r)
                }
            }
            if !partsStopped { for part in parts.reversed() { part.stop() } }
            leds.close()
            group.cancelAll()
        }
        await leds.status?.stop()
        await leds.flash?.stop()
        return exitCode
    }

    /// The parts' policy: a part helps the camera and never stops it. One whose start
    /// fails, or whose `run` ends while the service runs, is logged and started again
    /// (stopped first) after a backoff: 1 s, doubling to `PartPolicy.maxBackoff`, back to
    /// 1 s once it has run `PartPolicy.healthyRun`. A part that is off is left alone.
    private func supervise(_ part: any ServicePart, started first: PartStart) async {
        var started = first
        var backoff = PartPolicy.firstBackoff
        while !Task.isCancelled {
            switch started {
            case .off:
                return
            case .failed(let why):
                ctx.log.error("\(part.name) did not start: \(why); trying again in \(Self.words(backoff))")
                post(.partTrouble(name: part.name, what: "not started: \(why)"))
            case .running:
                let began = ctx.now
                // Its run is the service's work too: it waits on the service's clock, or until
                // cancelled (the default), giving this task's token back meanwhile.
                await part.run(self)
                if Task.isCancelled || partsStopping.load(ordering: .sequentiallyConsistent) { return }
                if ctx.now - began >= PartPolicy.healthyRun { backoff = PartPolicy.firstBackoff }
                ctx.log.error("\(part.name) stopped by itself; starting it again in \(Self.words(backoff))")
                part.stop()
            }
            do { try await ctx.clock.sleep(until: ctx.now + backoff) } catch { return }
            if partsStopping.load(ordering: .sequentiallyConsistent) { return }
            backoff = min(backoff * 2, PartPolicy.maxBackoff)
            started = part.start(self)
            if case .running = started { ctx.log.notice("\(part.name) started again") }
        }
    }

    private static func words(_ d: Duration) -> String { "\(d.nanoseconds / 1_000_000_000) s" }

    /// The microphone service: opened off the loop (an ALSA open can block); its
    /// sound goes straight to the clip recorder, never through the loop.
    private func microphone(into recorder: ClipRecorder) async {
        guard ctx.config.audio.enabled, let mic = ctx.roles.microphone else { return }
        let channels = ctx.config.audio.channels, rate = ctx.config.audio.sampleRate
        let opened: Result<AsyncStream<AudioChunk>, any Error> = await Blocking.run(on: DispatchQueue(label: "shutter.mic.open")) {
            Result { try mic.start(sampleRate: rate, channels: channels) }
        }
        guard case .success(let chunks) = opened else {
            if case .failure(let e) = opened { ctx.log.warning("microphone unavailable, clips will have no sound: \(e)") }
            return
        }
        post(.microphone(running: true))
        // Waiting for sound is no work in flight: the token is given back for each wait and
        // taken again once a chunk came (the simulated microphone's stream says whether its
        // reader has caught up meanwhile: SimBoard.settle(consumers:)).
        let token = WorkToken.current
        token?.release()
        for await c in chunks {
            token?.retake()
            recorder.offer(c)
            ctx.video?.offer(c)
            token?.release()
        }
        token?.retake()
        post(.microphone(running: false))
        if !Task.isCancelled { ctx.log.warning("microphone stopped delivering sound: clips continue without audio") }
        mic.stop()
    }

    /// At start, before the camera opens: the camera a switch chose, if it is
    /// still connected; else the configured choice, with a warning (the choice
    /// stays remembered for when it is back).
    private func rememberedCamera(_ pick: CameraPick?) async -> Int? {
        guard let pick else { return nil }
        let cameras = (try? await ctx.roles.listCameras()) ?? []
        if let i = pick.find(in: cameras) {
            ctx.log.notice("camera \(cameras[i].summary), as `shutterctl camera` chose (remembered in "
                           + "\(SettingsFile.path(root: ctx.storage.root)))")
            return i
        }
        let there = cameras.isEmpty ? "no camera is listed" : "the cameras are " + cameras.map(\.summary).joined(separator: ", ")
        ctx.log.warning("the camera `shutterctl camera` chose, \(pick.index) (\(pick.model)), is not connected "
                        + "(\(there)); using the configured camera (camera.index / camera.model)")
        return nil
    }
}

/// A service of the process that lives as long as the camera loop: the control
/// socket, the web page, MQTT, the terminal. Started in order, before the loop takes
/// its first event; stopped in reverse once it is done. One that fails is started
/// again (`CameraService.supervise`): the camera never stops for a part.
public protocol ServicePart: Sendable {
    /// What the log calls it ("the web page").
    var name: String { get }
    /// Starts it (a socket bound, a thread reading keys).
    func start(_ service: CameraService) -> PartStart
    /// Runs until cancelled (the default waits); returning early is a failure. It counts as
    /// the service's work in flight (`InFlight`) except while it waits on the service's
    /// clock or until cancelled (the default): a test on a manual clock waits for it.
    func run(_ service: CameraService) async
    func stop()
}

extension ServicePart {
    public func run(_ service: CameraService) async {
        await Cancelled.wait()
    }
}

/// A wait that only the task's cancellation ends, its `WorkToken` given back meanwhile.
private final class Cancelled: Sendable {
    private let waiter = Mutex<(CheckedContinuation<Void, Never>, WorkToken?)?>(nil)

    static func wait() async {
        let box = Cancelled()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now: Bool = box.waiter.withLock { w in
                    if Task.isCancelled { return true }
                    w = (c, WorkToken.releaseCurrent())
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            let w = box.waiter.withLock { w in defer { w = nil }; return w }
            w?.1?.retake()
            w?.0.resume()
        }
    }
}

/// How a part's start went.
public enum PartStart: Sendable, Equatable {
    case running
    /// Not configured (`mqtt.enabled` false), or configured so that it cannot run until
    /// the configuration changes (said in the log): not started again.
    case off
    /// Could not start now (a port in use, a file it cannot read yet): started again later.
    case failed(String)
}

/// The bounds of `CameraService.supervise`.
enum PartPolicy {
    static let firstBackoff = Duration.seconds(1)
    static let maxBackoff = Duration.seconds(60)
    /// A part that ran this long before it failed starts again after `firstBackoff`.
    static let healthyRun = Duration.seconds(600)
}

/// What a Unix signal asks of the service (SIGUSR1, SIGUSR2, SIGTERM/SIGINT, SIGHUP).
public enum ServiceSignal: Sendable {
    case photo, toggleRecording, stop
    /// Reread the configuration file: its runtime settings take effect.
    case reload
}
