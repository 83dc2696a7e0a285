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
    private let inbox: AsyncStream<ServiceEvent>
    private let input: AsyncStream<ServiceEvent>.Continuation
    private let supervisor: CameraSupervisor
    private let preview: PreviewFrames?
    private let reloadConfig: (@Sendable () throws(ConfigError) -> ShutterConfig)?
    /// When the loop wants its next tick (the timer service reads it).
    private let wake = Mutex<MonotonicTime?>(nil)
    private let wakeup = Wakeup()
    /// Set once the loop is done: the status it ended with. A request after that
    /// is answered at once (nobody takes events any more).
    private let ended = Mutex<ServiceStatus?>(nil)

    /// `reloadConfig`: loads the configuration again as at start, for SIGHUP.
    /// `preview`: the web page's live preview and clip posters, when the page is on.
    public convenience init(config: ShutterConfig, roles: BoardRoles, hooks: ServiceHooks = ServiceHooks(),
                            clock: any MonotonicClock = SystemClock(), wallClock: any WallClock = SystemWallClock(),
                            reloadConfig: (@Sendable () throws(ConfigError) -> ShutterConfig)? = nil) {
        self.init(config: config, roles: roles, hooks: hooks, clock: clock, wallClock: wallClock,
                  reloadConfig: reloadConfig, preview: nil)
    }

    init(config: ShutterConfig, roles: BoardRoles, hooks: ServiceHooks, clock: any MonotonicClock,
         wallClock: any WallClock, reloadConfig: (@Sendable () throws(ConfigError) -> ShutterConfig)?,
         preview: PreviewFrames?) {
        ctx = ServiceContext(config: config, roles: roles, clock: clock, wallClock: wallClock,
                             storage: Storage(config: config), hooks: hooks, log: Log("shutter.service"),
                             startedAt: clock.now())
        (inbox, input) = AsyncStream.makeStream(of: ServiceEvent.self)
        supervisor = CameraSupervisor(opening: CameraOpening(config), controls: config.camera.controls,
                                      open: roles.openCamera)
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
        input.yield(event)
    }

    /// A request, answered once the loop has an answer for it.
    public func handle(_ request: ControlRequest) async -> ControlReply {
        await withCheckedContinuation { c in
            post(.request(request, Reply { c.resume(returning: $0) }))
        }
    }

    public func status() async -> ServiceStatus {
        // Every reply to `status` carries one, the last one too.
        await handle(ControlRequest(cmd: "status")).status!
    }

    /// SIGTERM / SIGINT: finish the current file, then `run` returns 0.
    public func stop() { post(.signal(.stop)) }

    // MARK: Running

    /// Runs until `stop()` (SIGTERM/SIGINT), a watchdog give-up or power off;
    /// returns the process exit code. `signals` are handled in the order they come.
    public func run(signals: AsyncStream<ServiceSignal>? = nil, parts: [any ServicePart] = []) async -> Int32 {
        let config = ctx.config, roles = ctx.roles, log = ctx.log
        let board = config.board.description.isEmpty ? roles.name : "\(roles.name) (\(config.board.description))"
        log.notice("board \(board); storage \(ctx.storage.root); button hold \(config.button.holdMs) ms, max clip \(config.video.maxSeconds) s")
        ctx.hooks.status("starting on \(board)")
        let leds = LEDs(roles: roles, clock: ctx.clock)
        await leds.status?.show(.booting)
        let unfinished = await Health.prepareStorage(ctx)
        let loop = ServiceLoop(ctx: ctx, supervisor: supervisor, leds: leds, preview: preview, reloadConfig: reloadConfig)
        ctx.storage.onLowSpaceDeletion { [weak self] in self?.post(.deletedForSpace($0)) }
        loop.finishRecovered(unfinished)
        if let e = loop.photo.taker.unavailableReason { log.error("still encoder unavailable: \(e)") }
        let pick = await loop.control.load()
        await supervisor.prepare(choice: await rememberedCamera(pick), opening: loop.control.opening,
                                 controls: loop.control.controls)
        var exitCode: Int32 = 0
        // A discarding group: a child's task is freed when it ends. A plain task group
        // keeps every finished child until `next()` takes it, and nothing here does:
        // each job (an encode, a write, an LED change) leaked ~1-8 KB, ~64 KB a tap.
        await withDiscardingTaskGroup { group in
            let supervisor = self.supervisor
            group.addTask {
                await supervisor.run(events: { self.post(.camera($0)) }, frames: { self.post(.frame($0)) })
            }
            if let button = roles.button {
                let events = button.events()
                group.addTask { for await e in events { self.post(.button(e)) } }
            }
            let recorder = loop.clip.recorder
            group.addTask { await self.microphone(into: recorder) }
            group.addTask { await self.timer() }
            group.addTask { await leds.play() }
            if let signals {
                group.addTask { for await s in signals { self.post(.signal(s)) } }
            }
            for part in parts {
                part.start(self)
                group.addTask { await part.run(self) }
            }
            var events = inbox.makeAsyncIterator()
            while let event = await events.next() {
                loop.handle(event)
                for job in loop.jobs.take() {
                    group.addTask { self.post(.done(await job())) }
                }
                if let code = loop.exitCode {
                    exitCode = code
                    break
                }
                // The timer is woken only when the next tick comes sooner than it waits for.
                let next = loop.nextWake
                let sooner = wake.withLock { w in
                    defer { w = next }
                    return w.map { next < $0 } ?? true
                }
                if sooner { wakeup.notify() }
            }
            if loop.jobs.inFlight > 0, let exitNow = ctx.hooks.exitWithoutWaiting {
                // Past the stop bound: work that does not end (a write on a dead card) holds no one.
                for part in parts.reversed() { part.stop() }
                exitNow(exitCode)
            }
            ended.withLock { $0 = loop.status }
            loop.finish()
            // Requests that came in behind the last event are told it stopped.
            input.finish()
            while let event = await events.next() {
                if case .request(_, let reply) = event {
                    var r = ControlReply.failure("shutterd is stopping")
                    r.status = ended.withLock { $0 }
                    reply.send(r)
                }
            }
            for part in parts.reversed() { part.stop() }
            leds.close()
            group.cancelAll()
        }
        await leds.status?.stop()
        await leds.flash?.stop()
        return exitCode
    }

    /// The timer service: a tick at the loop's next deadline (or sooner, when it moves).
    private func timer() async {
        while !Task.isCancelled {
            let next = wake.withLock { $0 } ?? ctx.now + .milliseconds(500)
            await wakeup.wait(until: next, on: ctx.clock)
            if Task.isCancelled { return }
            // Due: one tick, and the deadline is taken (the loop sets the next one after it).
            let now = ctx.now
            let due = wake.withLock { w in
                guard let t = w, t <= now else { return false }
                w = nil
                return true
            }
            if due { post(.tick) }
        }
    }

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
        for await c in chunks { recorder.offer(c) }
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
/// socket, the web page, the terminal. Started in order, before the loop takes
/// its first event; stopped in reverse once it is done.
public protocol ServicePart: Sendable {
    /// Starts it (a socket bound, a thread reading keys); a failure is logged, not fatal.
    func start(_ service: CameraService)
    /// A part with a loop of its own runs it here until cancelled.
    func run(_ service: CameraService) async
    func stop()
}

extension ServicePart {
    public func run(_ service: CameraService) async {}
}

/// What a Unix signal asks of the service (SIGUSR1, SIGUSR2, SIGTERM/SIGINT, SIGHUP).
public enum ServiceSignal: Sendable {
    case photo, toggleRecording, stop
    /// Reread the configuration file: its runtime settings take effect.
    case reload
}
