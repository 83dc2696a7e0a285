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
import ShutterStorage

/// The camera control plane: which camera runs with what. Runtime settings
/// (`shutterctl set | get | reset`, SIGHUP), tap-to-focus, the camera switch
/// and the restart a setting needs, each with its rollback.
///
/// Why between captures, when libcamera would take a control with the next
/// request: the exposure and white balance loops converge over several frames,
/// so a change landing during a still's warm-up gives a photo exposed between
/// two settings, and one landing mid-clip a visible jump. A change is for the
/// next capture: it waits while a photo, a press or a clip is in progress.
///
/// A request that changes something is an operation (`Op`) that moves through
/// its steps as the loop tells it what happened (`resume`, the job results):
///
///     set/reset/focus: change → [reopen if the opening changed → first frame]
///                      → [camera has the controls] → state file → [AF cycle] → reply
///     camera switch:   list → wait for captures → reopen → first frame → state file → list → reply
///
/// A reopen that fails starts the previous camera and opening again and puts
/// the settings back: the service never ends up without a camera because of a request.
final class CameraControlPlane {
    /// What the loop carries out for the plane.
    enum Effect {
        case machine(CaptureInput)
        /// The camera is being reopened: captures wait, the watchdog does not count it as a stall.
        case reopening(status: String)
    }

    private let ctx: ServiceContext
    private let jobs: Jobs
    private let supervisor: CameraSupervisor
    /// The configuration's settable keys with the runtime changes over them.
    private(set) var settings: RuntimeSettings
    /// Changed settings not yet applied (a capture was in progress).
    private var unapplied = false
    /// The controls the camera is to have, and those a job is giving it now.
    private(set) var controls: CameraControls
    private var giving: CameraControls?
    /// The camera took new controls; the requests it had already queued still complete
    /// with the old ones. Until this many frames have come (or the time passed), a reply
    /// waits, so a photo taken on its answer is exposed with what it says.
    private var settling: (frames: Int, until: MonotonicTime)?
    static let settleFrames = 6
    /// The last two frames' timestamps: the wait for `settleFrames` scales with the
    /// frame rate (a 1 fps camera under emulation needs more than the 2 s floor).
    private var lastFrames: (MonotonicTime?, MonotonicTime?) = (nil, nil)
    /// The camera that streams (as the supervisor last reported), what it was opened with,
    /// the newest frame's metadata and the board's cameras.
    private(set) var camera: (any CameraDevice)?
    private(set) var opening: CameraOpening
    private(set) var lastMetadata: FrameMetadata?
    private(set) var cameras: [CameraListing] = []
    /// A reopen is under way: frames still coming from the camera being stopped are not this camera's.
    private(set) var reopening = false
    private var report = CameraReportLog()
    private var ops: [Int: Op] = [:]
    private var nextOp = 0
    /// Rereads the configuration (SIGHUP); nil where there is no file to reread.
    private let reloadConfig: (@Sendable () throws(ConfigError) -> ShutterConfig)?

    init(ctx: ServiceContext, jobs: Jobs, supervisor: CameraSupervisor,
         reloadConfig: (@Sendable () throws(ConfigError) -> ShutterConfig)?) {
        self.ctx = ctx
        self.jobs = jobs
        self.supervisor = supervisor
        self.reloadConfig = reloadConfig
        settings = RuntimeSettings(base: ctx.config)
        controls = ctx.config.camera.controls
        opening = CameraOpening(ctx.config)
    }

    // MARK: Operations

    private final class Op {
        enum Kind {
            case set(key: String)
            case reset(key: String?, reset: [String])
            case focus(autofocus: Bool)
            /// The `camera` request: `argument` nil lists the cameras.
            case camera(argument: String?)
            /// SIGHUP that changed the opening: nobody waits.
            case reload
        }

        enum Step {
            case start
            case listing
            case waitingForCaptures
            case reopening
            case waitingForFrames(until: MonotonicTime)
            case waitingForControls
            case saving
            case focusing
            case listingForReply
        }

        let kind: Kind
        let reply: Reply?
        var step = Step.start
        var notes: [String] = []
        /// The settings to go back to if the reopen fails; the opening to reopen with.
        var before: RuntimeSettings?
        var reopen: (index: Int?, opening: CameraOpening, what: String)?
        /// Switch: the camera asked for and the one before it.
        var target: CameraListing?
        var from = "none"
        var failed: String?
        /// The change waits for the capture in progress (applied when it ends).
        var deferred = false
        /// The log said the reopen waits for the capture in progress.
        var saidWaiting = false

        init(_ kind: Kind, reply: Reply?) {
            self.kind = kind
            self.reply = reply
        }
    }

    private func begin(_ kind: Op.Kind, reply: Reply?, before: RuntimeSettings? = nil) -> Int {
        nextOp += 1
        let op = Op(kind, reply: reply)
        op.before = before
        ops[nextOp] = op
        return nextOp
    }

    /// Whether a reopen (switch or restart) is queued or under way.
    private var reopenAsked: Bool { ops.values.contains { $0.reopen != nil } }

    // MARK: Requests

    func set(_ request: ControlRequest, reply: Reply) -> [Effect] {
        guard let key = request.key, let value = request.value else {
            reply.send(.failure("set needs \"key\" and \"value\", e.g. {\"cmd\":\"set\",\"key\":\"camera.exposure.ev\",\"value\":2}"))
            return []
        }
        let before = settings
        do throws(ConfigError) {
            try settings.set(key, to: value)
        } catch {
            reply.send(.failure(error.description))
            return []
        }
        ctx.log.notice("setting \(key) = \(settings.value(of: key).rendered(pretty: false))")
        return takeEffect(begin(.set(key: key), reply: reply, before: before))
    }

    func get(_ request: ControlRequest) -> ControlReply {
        guard let key = request.key else {
            var r = ControlReply(ok: true)
            r.settings = RuntimeSettings.settableKeys.map(settingState)
            return r
        }
        do throws(ConfigError) {
            _ = try RuntimeSettings.settableKey(key, source: "shutterctl get")
        } catch {
            return .failure(error.description)
        }
        return ControlReply(setting: settingState(key))
    }

    func reset(_ request: ControlRequest, reply: Reply) -> [Effect] {
        var reset: [String] = []
        let before = settings
        if let key = request.key {
            do throws(ConfigError) {
                try settings.reset(key)
            } catch {
                reply.send(.failure(error.description))
                return []
            }
        } else {
            reset = settings.resetAll()
        }
        ctx.log.notice("setting \(request.key ?? "every runtime change") back to the configuration")
        return takeEffect(begin(.reset(key: request.key, reset: reset), reply: reply, before: before))
    }

    static let pointOfInterestKeys = ["camera.focus.window", "camera.exposure.window"]

    /// `shutterctl focus X Y | reset`: the point becomes a small window that is the
    /// runtime value of `camera.focus.window` and `camera.exposure.window`.
    func focus(_ request: ControlRequest, reply: Reply) -> [Effect] {
        let before = settings
        var notes: [String] = []
        if request.action == "reset" {
            for key in Self.pointOfInterestKeys { _ = try? settings.reset(key, source: "shutterctl focus reset") }
            ctx.log.notice("point of interest reset: the configuration's focus and exposure windows")
            notes.append("focus and exposure metering back to the configuration's windows")
            let id = begin(.focus(autofocus: false), reply: reply, before: before)
            ops[id]?.notes = notes
            return takeEffect(id)
        }
        guard request.action == nil else {
            reply.send(.failure("focus takes \"x\" and \"y\", or \"action\": \"reset\" (not \"\(request.action!)\")"))
            return []
        }
        let point: PointOfInterest
        do throws(PointOfInterest.Refusal) {
            point = try PointOfInterest(x: request.x, y: request.y)
        } catch {
            reply.send(.failure(error.message))
            return []
        }
        let c = ctx.config.camera
        let window = point.window(controls: settings.effective.camera.controls, rotation: c.rotation,
                                  hflip: c.hflip, vflip: c.vflip)
        let value = JSONValue.array(window.map(JSONValue.double))
        do throws(ConfigError) {
            for key in Self.pointOfInterestKeys { try settings.set(key, to: value, source: "shutterctl focus") }
        } catch {
            settings = before  // both or neither
            reply.send(.failure(error.description))
            return []
        }
        ctx.log.notice("point of interest \(point.x), \(point.y): focus and exposure windows \(value.rendered(pretty: false))")
        notes.append("focus and exposure metering on \(value.rendered(pretty: false))")
        let id = begin(.focus(autofocus: true), reply: reply, before: before)
        ops[id]?.notes = notes
        return takeEffect(id)
    }

    /// `shutterctl camera [next|INDEX|MODEL]`: lists the cameras first (a job).
    /// `camera`: list the cameras, or switch to one.
    func cameraRequest(_ request: ControlRequest, reply: Reply) {
        let id = begin(.camera(argument: request.camera), reply: reply)
        ops[id]?.step = .listing
        listCameras(for: id)
    }

    /// A double tap changed the flash mode: a runtime setting like any other.
    func flashModeChanged(to mode: FlashMode) {
        let key = "flash.mode"
        guard settings.value(of: key) != .string(mode.rawValue) else { return }
        do throws(ConfigError) {
            try settings.set(key, to: .string(mode.rawValue), source: "double tap")
        } catch {
            ctx.log.warning("flash mode \(mode.rawValue) not kept: \(error.description)")
            return
        }
        save(op: nil)
    }

    /// SIGHUP: rereads the configuration file (a job).
    func reload() {
        guard let reload = reloadConfig else {
            ctx.log.notice("SIGHUP: no configuration file to reread in this process")
            return
        }
        ctx.log.notice("SIGHUP: rereading the configuration")
        jobs.add {
            let result: Result<ShutterConfig, ConfigError> = await Blocking.run(on: Self.settingsQueue) {
                Result { () throws(ConfigError) -> ShutterConfig in try reload() }
            }
            return .configReread(result)
        }
    }

    /// The configuration was reread: its settable keys take effect (runtime
    /// changes still win); any other key that changed needs a restart and is named.
    func reread(_ result: Result<ShutterConfig, ConfigError>) -> [Effect] {
        let new: ShutterConfig
        switch result {
        case .failure(let e):
            ctx.log.error("configuration: \(e.description)")
            ctx.log.warning("configuration not reread: the running settings are kept")
            return []
        case .success(let c):
            new = c
        }
        let previous = settings
        let running = ctx.config.tree(), reread = new.tree(), before = settings.base.tree()
        for leaf in reread.leaves() where !RuntimeSettings.isSettable(leaf.path) {
            if running.value(at: leaf.path) != leaf.value { ctx.log.warning("needs a restart: \(leaf.path)") }
        }
        let changed = RuntimeSettings.settableKeys.filter { before.value(at: $0) != reread.value(at: $0) }
        settings.rebase(new)
        for key in changed {
            let shadow = settings.changes[key].map { " (the runtime setting \($0.rendered(pretty: false)) still wins)" } ?? ""
            ctx.log.notice("configuration reread: \(key) = \(reread.value(at: key)?.rendered(pretty: false) ?? "null")\(shadow)")
        }
        guard CameraOpening(settings.effective) != opening else {
            unapplied = true
            return []
        }
        return takeEffect(begin(.reload, reply: nil, before: previous))
    }

    // MARK: Taking effect

    /// After a change: reopen when the opening changed (refused while another
    /// reopen is asked for), else mark the settings to apply.
    private func takeEffect(_ id: Int) -> [Effect] {
        guard let op = ops[id] else { return [] }
        let wanted = CameraOpening(settings.effective)
        if wanted != opening {
            if reopenAsked {
                return refuseReopen(id, "busy: a camera switch or restart is in progress; try again", busy: true)
            }
            op.reopen = (nil, wanted, Self.describeChange(from: opening, to: wanted))
            op.step = .waitingForCaptures
        } else {
            unapplied = true
            op.step = .waitingForControls
        }
        return []
    }

    private func refuseReopen(_ id: Int, _ message: String, busy: Bool) -> [Effect] {
        guard let op = ops.removeValue(forKey: id) else { return [] }
        if let before = op.before {
            settings = before
            unapplied = true
        }
        if let reply = op.reply {
            var r = ControlReply.failure(message)
            if busy { r.busy = true }
            reply.send(r)
        } else {
            ctx.log.warning("configuration reread: \(message)")
        }
        return []
    }

    /// After every event: settings waiting for the captures to end are applied,
    /// and every operation goes as far as it can. `betweenCaptures`: no photo,
    /// press, clip or snapshot in progress.
    func resume(betweenCaptures: Bool, cameraHealthy: Bool, flashMode: FlashMode, videoTorch: Bool,
                now: MonotonicTime) -> [Effect] {
        var effects: [Effect] = []
        // Twice: an operation that went on may have left settings to apply (after a reopen).
        for _ in 0..<2 {
            effects += resumeOnce(betweenCaptures: betweenCaptures, cameraHealthy: cameraHealthy, flashMode: flashMode,
                                  videoTorch: videoTorch, now: now)
            if !unapplied || !betweenCaptures { break }
        }
        return effects
    }

    private func resumeOnce(betweenCaptures: Bool, cameraHealthy: Bool, flashMode: FlashMode, videoTorch: Bool,
                            now: MonotonicTime) -> [Effect] {
        var effects: [Effect] = []
        if let s = settling, now >= s.until { settling = nil }  // a camera without frames holds no reply
        if unapplied, betweenCaptures, !reopening {
            unapplied = false
            let wanted = settings.effective
            let flash = FlashMode(wanted.flash.mode)
            if flash != flashMode { effects.append(.machine(.setFlashMode(flash))) }
            if wanted.video.torch != videoTorch { effects.append(.machine(.setVideoTorch(wanted.video.torch))) }
            if controls != wanted.camera.controls {
                controls = wanted.camera.controls
                giveControls()
            }
        }
        for id in ops.keys.sorted() {
            effects += advance(id, betweenCaptures: betweenCaptures, cameraHealthy: cameraHealthy, now: now)
        }
        return effects
    }

    /// The earliest time an operation waits for (the first frame's bound).
    var nextDeadline: MonotonicTime? {
        let waits = ops.values.compactMap { op -> MonotonicTime? in
            if case .waitingForFrames(let t) = op.step { return t }
            return nil
        }
        return (waits + [settling?.until].compactMap { $0 }).min()
    }

    private func advance(_ id: Int, betweenCaptures: Bool, cameraHealthy: Bool, now: MonotonicTime) -> [Effect] {
        guard let op = ops[id] else { return [] }
        switch op.step {
        case .start, .listing, .reopening, .saving, .focusing, .listingForReply:
            return []  // waits for a job
        case .waitingForCaptures:
            guard let reopen = op.reopen else { return [] }
            // The first reopen asked for goes first.
            if let first = ops.keys.filter({ ops[$0]?.reopen != nil }).min(), first != id { return [] }
            guard betweenCaptures, !reopening else {
                if !betweenCaptures, !op.saidWaiting {
                    op.saidWaiting = true
                    let what = op.target == nil ? "camera restart for \(reopen.what)" : reopen.what
                    ctx.log.notice("\(what): waiting for the capture in progress")
                }
                return []
            }
            op.step = .reopening
            let message: String
            if case .camera = op.kind {
                ctx.log.notice("camera switch: \(op.from) to \(op.target?.summary ?? "?")")
                message = "switching camera"
            } else {
                ctx.log.notice("camera restart for \(reopen.what)")
                // The new controls are given at the open, with the new opening.
                controls = settings.effective.camera.controls
                message = "restarting the camera"
            }
            startReopen(op: id, index: reopen.index, opening: reopen.opening)
            return [.reopening(status: message)]
        case .waitingForFrames(let until):
            guard cameraHealthy || now >= until else { return [] }
            reopened(op)
            return advance(id, betweenCaptures: betweenCaptures, cameraHealthy: cameraHealthy, now: now)
        case .waitingForControls:
            guard !unapplied || !betweenCaptures else { return [] }
            if unapplied {
                op.deferred = true
                op.notes.append("applied when the capture in progress ends")
            }
            guard unapplied || (giving == nil && settling == nil) else { return [] }
            save(op: id)
            return []
        }
    }

    // MARK: Reopening

    /// The camera at `index` (nil: the one in use) with `opening`; the previous
    /// camera and opening again when it does not start (`CameraSupervisor.switchCamera`).
    private func startReopen(op: Int, index: Int?, opening: CameraOpening) {
        camera = nil
        lastMetadata = nil
        reopening = true
        let supervisor = self.supervisor
        let controls = self.controls
        jobs.add { .reopened(op: op, await supervisor.switchCamera(to: index, opening: opening, controls: controls)) }
    }

    /// The reopen job came back (the supervisor's `.started` came before it).
    func reopened(op id: Int, _ outcome: CameraSupervisor.SwitchOutcome, now: MonotonicTime) {
        reopening = false
        guard let op = ops[id] else { return }
        let what = op.reopen?.what ?? "the change"
        switch outcome {
        case .switched:
            op.step = .waitingForFrames(until: now + .milliseconds(Int64(ctx.config.watchdog.frameTimeoutMs)))
            return
        case .wentBack(let error, _):
            if case .camera = op.kind {
                op.failed = "camera \(op.target?.summary ?? "?") did not start: \(Self.reason(error)); went back to camera "
                    + "\(op.from), which is running again"
            } else {
                op.failed = "the camera did not start with \(what): \(Self.reason(error)); it runs again with the "
                    + "previous settings, which are kept"
            }
            ctx.log.warning(op.failed!)
            op.step = .waitingForFrames(until: now + .milliseconds(Int64(ctx.config.watchdog.frameTimeoutMs)))
        case .failed(let error, let previousError):
            if case .camera = op.kind {
                op.failed = "camera \(op.target?.summary ?? "?") did not start: \(Self.reason(error)); going back to camera "
                    + "\(op.from) failed too: \(Self.reason(previousError)); it is retried like any camera that stops"
            } else {
                op.failed = "the camera did not start with \(what): \(Self.reason(error)); starting it again with the "
                    + "previous settings failed too: \(Self.reason(previousError)); it is retried like any camera that "
                    + "stops, with the previous settings"
            }
            ctx.log.error(op.failed!)
            reopened(op)
        }
    }

    /// Frames came after a reopen (or its bound passed): the operation goes on.
    private func reopened(_ op: Op) {
        op.reopen = nil
        if case .camera = op.kind {
            if op.failed == nil, let target = op.target {
                settings.camera = CameraPick(index: target.index, model: target.model)
                ctx.log.notice("camera \(target.summary) in use (was \(op.from))")
                op.notes.append("switched from camera \(op.from) to camera \(target.summary)")
            }
            save(op: idOf(op))
            return
        }
        if op.failed != nil {
            // Back to the previous settings: the camera runs with them again.
            if let before = op.before { settings = before }
            controls = settings.effective.camera.controls
            unapplied = true
            if let reply = op.reply { reply.send(.failure(op.failed!)) }
            ops[idOf(op)] = nil
            return
        }
        let wanted = opening
        let granted = camera?.controlReport.videoSize.map {
            "; video \(Self.granted($0, of: wanted.videoSizes, note: camera?.controlReport.videoSizeNote))" } ?? ""
        let hdr = wanted.sensorHDR ? (camera?.controlReport.sensorHDR == true ? "; sensor HDR on" : "") : ""
        ctx.log.notice("camera restarted\(granted)\(hdr)")
        op.notes.append("the camera restarted for this change\(granted)\(hdr)")
        unapplied = true  // the flash mode and torch, if they changed too
        op.step = .waitingForControls
    }

    private func idOf(_ op: Op) -> Int { ops.first { $0.value === op }?.key ?? -1 }

    // MARK: The camera's life

    /// The supervisor started a camera: it is the one in use.
    func started(_ camera: any CameraDevice, opening: CameraOpening, restart: Bool) {
        reopening = false
        self.camera = camera
        self.opening = opening
        report.started(camera: camera, opening: opening, restart: restart, log: ctx.log)
        listCameras(for: nil)
    }

    /// The camera stopped or could not start.
    func lost() {
        lastFrames = (nil, nil)
        camera = nil
        lastMetadata = nil
    }

    func frameArrived(_ f: Frame) {
        lastMetadata = f.metadata
        lastFrames = (lastFrames.1, f.timestamp)
        if let s = settling { settling = s.frames > 1 ? (s.frames - 1, s.until) : nil }
    }

    func photoSaved() { report.still(camera: camera, opening: opening, log: ctx.log) }

    /// Gives the camera `controls`, one change at a time; a newer one follows when it is done.
    private func giveControls() {
        guard giving == nil, let cam = camera, cam.controlReport.asked != controls else { return }
        giving = controls
        let controls = self.controls
        jobs.add {
            await cam.apply(controls)
            return .controlsApplied
        }
    }

    func controlsApplied(now: MonotonicTime) {
        giving = nil
        // At most 2 s, or twice the frames' time at the camera's own rate.
        var bound = Duration.seconds(2)
        if let a = lastFrames.0, let b = lastFrames.1, b > a { bound = max(bound, (b - a) * (2 * Self.settleFrames)) }
        settling = (Self.settleFrames, now + min(bound, .seconds(30)))
        // What the camera lacks may have changed with the controls: said once, as at a start.
        if let lacking = camera?.controlReport.lacking { report.lacking(lacking, log: ctx.log) }
        giveControls()
    }

    private func listCameras(for op: Int?) {
        let list = ctx.roles.listCameras
        jobs.add {
            do {
                return .camerasListed(op: op, .success(try await list()))
            } catch {
                return .camerasListed(op: op, .failure(error))
            }
        }
    }

    /// The cameras were listed: for `status`, and for the request that asked.
    func listed(op id: Int?, _ result: Result<[CameraListing], any Error>, cameraHealthy: Bool) {
        if case .success(let list) = result { cameras = list }
        guard let id, let op = ops[id] else { return }
        if case .listingForReply = op.step {
            var reply = op.failed.map(ControlReply.failure) ?? ControlReply(ok: true)
            if op.failed == nil { reply.note = op.notes.joined(separator: "; ") }
            reply.camera = inUseIndex.map { cameras[$0] }
            return finish(id, reply)
        }
        guard case .camera(let argument) = op.kind else { return }
        let list: [CameraListing]
        switch result {
        case .success(let l): list = l
        case .failure(let e): return finish(id, .failure("cannot list the cameras: \(e)"))
        }
        let inUse = inUseIndex
        guard let argument else {
            var reply = ControlReply(ok: true)
            reply.cameras = list.map { c in
                var c = c
                c.inUse = c.index == inUse
                return c
            }
            return finish(id, reply)
        }
        guard let choice = CameraChoice(parsing: argument) else {
            return finish(id, .failure("camera needs next, an index (0, 1, ...) or a model name, not \"\(argument)\"; "
                                       + "`shutterctl camera` lists them"))
        }
        let index: Int
        switch choice.pick(from: list, inUse: inUse) {
        case .success(let i): index = i
        case .failure(let e): return finish(id, .failure("\(e.message); `shutterctl camera` lists them"))
        }
        let target = list[index]
        if index == inUse, cameraHealthy {
            var reply = ControlReply(ok: true)
            reply.camera = target
            reply.note = "camera \(target.summary) is already in use"
            return finish(id, reply)
        }
        if reopenAsked {
            var reply = ControlReply.failure("busy: a camera switch is in progress")
            reply.busy = true
            return finish(id, reply)
        }
        op.target = target
        op.from = inUse.map { list[$0].summary } ?? "none"
        op.reopen = (index, opening, "camera switch to \(target.summary)")
        op.step = .waitingForCaptures
    }

    /// The camera in use among the listed cameras (by libcamera's id).
    var inUseIndex: Int? {
        guard let id = camera?.info.id else { return nil }
        return cameras.firstIndex { $0.id == id }
    }

    // MARK: The state file

    private static let settingsQueue = DispatchQueue(label: "shutter.settings")

    /// Writes the state file (no file when nothing is changed); the result goes to `op`.
    private func save(op id: Int?) {
        if let id { ops[id]?.step = .saving }
        let text = settings.isEmpty ? nil : settings.stateDocument
        let storage = ctx.storage
        // The queue keeps writes in the order of the changes (the text is taken here).
        jobs.add {
            let result: Result<Void, any Error> = await Blocking.run(on: Self.settingsQueue) {
                Result {
                    // Never onto the system disk under an unmounted card's mount point.
                    if storage.requireMountPoint { try storage.checkHealth() }
                    if let text {
                        try SettingsFile.write(text, root: storage.root)
                    } else if unlink(SettingsFile.path(root: storage.root)) != 0 && errno != ENOENT {
                        throw SystemError(errno: errno, call: "unlink", path: SettingsFile.path(root: storage.root))
                    }
                }
            }
            guard case .failure(let e) = result else { return .settingsSaved(op: id, note: nil) }
            return .settingsSaved(op: id, note: "\(e)")
        }
    }

    /// The state file was written (or not): the operation's reply, or its AF cycle.
    func saved(op id: Int?, problem: String?) {
        if let problem { ctx.log.warning("runtime settings not remembered (they hold until a restart): \(problem)") }
        guard let id, let op = ops[id] else { return }
        if let problem { op.notes.append("not remembered across a restart: \(problem)") }
        switch op.kind {
        case .set(let key):
            finish(id, ControlReply(setting: settingState(key), note: op.notes.isEmpty ? nil : op.notes.joined(separator: "; ")))
        case .reset(let key?, _):
            finish(id, ControlReply(setting: settingState(key), note: op.notes.isEmpty ? nil : op.notes.joined(separator: "; ")))
        case .reset(nil, let reset):
            var reply = ControlReply(ok: true)
            reply.settings = reset.map(settingState)
            reply.note = op.notes.isEmpty ? (reset.isEmpty ? "no runtime changes" : nil) : op.notes.joined(separator: "; ")
            finish(id, reply)
        case .focus(let autofocus):
            guard autofocus else { return finish(id, focusReply(op.notes)) }
            focusCycle(id)
        case .camera:
            op.step = .listingForReply
            listCameras(for: id)
        case .reload:
            ops[id] = nil
        }
    }

    // MARK: Tap-to-focus

    /// What the lens does about the new window: an AF cycle of its own in auto mode.
    private func focusCycle(_ id: Int) {
        guard let op = ops[id] else { return }
        guard let cam = camera else {
            op.notes.append("no camera is open: the windows apply when it starts")
            return finish(id, focusReply(op.notes))
        }
        switch settings.effective.camera.controls.focus.effectiveMode {
        case .manual:
            let at = lastMetadata?.lensPosition.map { " (at \(Self.dioptres($0)) dioptres)" } ?? ""
            op.notes.append("manual focus: the lens is left alone\(at)")
        case .continuous:
            op.notes.append("continuous autofocus follows the window")
        case .auto:
            if op.deferred {
                op.notes.append("autofocus mode: the window is used from the next press's autofocus cycle")
                break
            }
            // A cycle of its own, as the demos' tap does; bounded, it never hangs the reply.
            op.step = .focusing
            jobs.add { .focused(op: id, await cam.autofocus(timeout: .seconds(2))) }
            return
        }
        finish(id, focusReply(op.notes))
    }

    func focused(op id: Int, _ r: AutofocusResult) {
        guard let op = ops[id] else { return }
        let lens = r.lensPosition.map { ", lens at \(Self.dioptres($0)) dioptres" } ?? ""
        if r.timedOut {
            op.notes.append("autofocus cycle timed out after 2 s\(lens)")
        } else {
            op.notes.append("autofocus cycle \(r.state == .focused ? "focused" : "did not focus (\(r.state))")\(lens)")
        }
        finish(id, focusReply(op.notes))
    }

    private func focusReply(_ notes: [String]) -> ControlReply {
        var notes = notes
        // Said, never dropped: a window the camera cannot place (libcamera has no
        // exposure metering window; a fixed-focus lens no AfWindows).
        for l in camera?.controlReport.lacking ?? [] where l.keys.contains(where: Self.pointOfInterestKeys.contains) {
            notes.append("not applied: \(l)")
        }
        var reply = ControlReply(ok: true)
        reply.settings = Self.pointOfInterestKeys.map(settingState)
        reply.note = notes.joined(separator: "; ")
        return reply
    }

    private func finish(_ id: Int, _ reply: ControlReply) {
        ops.removeValue(forKey: id)?.reply?.send(reply)
    }

    /// Stopping: nobody waits for an operation that will not end.
    func failAll(_ message: String) {
        for id in ops.keys.sorted() { finish(id, .failure(message)) }
    }

    // MARK: What `get` and `status` show

    /// One setting as `get` shows it.
    func settingState(_ key: String) -> SettingState {
        SettingState(key: key, value: settings.value(of: key),
                     source: settings.changes[key] == nil ? "config" : "runtime", effective: effectiveValue(key))
    }

    /// The machine's flash mode and torch, for `get` (the loop's machine holds them).
    var machineFlash: () -> (mode: FlashMode, torch: Bool) = { (.off, false) }

    /// What is in effect, only where there is a fact: the last frame's exposure
    /// time, analogue gain, colour gains and lens position; the machine's flash
    /// mode and torch; else what the camera was given, unless it lacks the control.
    private func effectiveValue(_ key: String) -> JSONValue? {
        switch key {
        case "flash.mode": return .string(machineFlash().mode.rawValue)
        case "video.torch": return .bool(machineFlash().torch)
        case "camera.exposure.shutterUs": return lastMetadata?.exposureTimeMicroseconds.map(JSONValue.int)
        case "camera.exposure.gain": return lastMetadata?.analogueGain.map(JSONValue.double)
        default: break
        }
        guard let camera else { return nil }
        let report = camera.controlReport
        if report.lacking.contains(where: { $0.keys.contains(key) }) { return nil }
        if key == "camera.focus.lensPosition", let p = lastMetadata?.lensPosition { return .double(p) }
        if key == "camera.whiteBalance.gains", let g = lastMetadata?.colourGains { return .array(g.map(JSONValue.double)) }
        return Self.value(of: key, in: report.asked)
    }

    /// A `camera.*` key's value in a set of controls, normalized as the schema has it.
    private static func value(of key: String, in controls: CameraControls) -> JSONValue? {
        guard key.hasPrefix("camera."), let schema = ConfigSchema.byPath[key],
              let data = try? JSONEncoder().encode(controls),
              let tree = try? JSONParser.parse(String(decoding: data, as: UTF8.self)).value,
              let v = tree.value(at: String(key.dropFirst("camera.".count)))
        else { return nil }
        return (try? ConfigSchema.check(v, for: schema)) ?? v
    }

    /// The `camera` part of `status`.
    var status: ServiceStatus.Camera {
        let video = opening.videoSizes, still = opening.stillSizes
        guard let camera else {
            return ServiceStatus.Camera(model: "none", asked: controls, lacking: [], videoSize: nil,
                                        stillSize: nil, videoSizesAsked: video, stillSizesAsked: still)
        }
        let r = camera.controlReport
        return ServiceStatus.Camera(
            model: camera.info.model, index: inUseIndex, id: camera.info.id, asked: r.asked,
            lacking: r.lacking, videoSize: r.videoSize, stillSize: r.stillSize,
            videoSizesAsked: video, stillSizesAsked: still,
            videoSizeEntry: r.videoSize.flatMap { SizePreference.entry(of: $0, in: video) },
            stillSizeEntry: r.stillSize.flatMap { SizePreference.entry(of: $0, in: still) },
            sensorHdr: r.sensorHDR, frame: lastMetadata, stillStream: r.stillStream, bufferMemory: r.bufferMemory,
            videoSizeNote: r.videoSizeNote)
    }

    // MARK: Start

    /// Before the loop: the state file's changes over the configuration. A file that
    /// cannot be read as settings is set aside (never fatal); a key this version
    /// does not know is dropped, each with a warning. Returns the camera a switch chose.
    func load() async -> CameraPick? {
        let root = ctx.storage.root, log = ctx.log
        let read: Result<String?, SystemError> = await Blocking.run(on: Self.settingsQueue) {
            Result { () throws(SystemError) -> String? in try SettingsFile.read(root: root) }
        }
        var problem: String?
        var changes: [String: JSONValue] = [:]
        var camera: CameraPick?
        var dirty = false
        switch read {
        case .success(nil):
            return nil
        case .success(let text?):
            do throws(ConfigError) {
                let parsed = try RuntimeSettings.parseState(text)
                changes = parsed.changes
                camera = parsed.camera
                for d in parsed.dropped { log.warning("runtime setting dropped from \(SettingsFile.path(root: root)): \(d)") }
                dirty = !parsed.dropped.isEmpty
            } catch {
                problem = "\(error.source): \(error.message)"
            }
        case .failure(let e):
            problem = "\(e)"
        }
        if let problem {
            let moved: Result<String, SystemError> = await Blocking.run(on: Self.settingsQueue) {
                Result { () throws(SystemError) -> String in try SettingsFile.setAside(root: root) }
            }
            switch moved {
            case .success(let aside):
                log.warning("runtime settings file \(SettingsFile.path(root: root)) is unreadable (\(problem)); "
                            + "moved to \(aside), starting with the configuration's settings")
            case .failure(let e):
                log.warning("runtime settings file \(SettingsFile.path(root: root)) is unreadable (\(problem)) "
                            + "and could not be moved aside (\(e)); starting with the configuration's settings")
            }
            return nil
        }
        settings = RuntimeSettings(base: settings.base, changes: changes, camera: camera)
        if !changes.isEmpty {
            log.notice("runtime settings from \(SettingsFile.path(root: root)): "
                       + changes.keys.sorted().map { "\($0) = \(changes[$0]!.rendered(pretty: false))" }.joined(separator: ", "))
        }
        unapplied = true
        controls = settings.effective.camera.controls
        opening = CameraOpening(settings.effective)
        if dirty { save(op: nil) }
        return camera
    }

    // MARK: Words

    /// A camera error's message without its code prefix (it reads in a sentence).
    static func reason(_ error: any Error) -> String {
        (error as? CameraError)?.message ?? "\(error)"
    }

    /// "video.sizes 1280x720 (was 1920x1080)", "camera.hdr sensor (was off)".
    static func describeChange(from old: CameraOpening, to new: CameraOpening) -> String {
        func list(_ s: [PixelSize]) -> String { s.map(\.description).joined(separator: ", ") }
        var parts: [String] = []
        if old.videoSizes != new.videoSizes { parts.append("video.sizes \(list(new.videoSizes)) (was \(list(old.videoSizes)))") }
        if old.stillSizes != new.stillSizes { parts.append("still.sizes \(list(new.stillSizes)) (was \(list(old.stillSizes)))") }
        if old.sensorHDR != new.sensorHDR {
            parts.append(new.sensorHDR ? "camera.hdr sensor" : "camera.hdr away from sensor")
        }
        return parts.joined(separator: " and ")
    }

    static func granted(_ size: PixelSize, of asked: [PixelSize], note: String? = nil) -> String {
        CameraReportLog.granted(size, of: asked, note: note)
    }

    private static func dioptres(_ d: Double) -> String { String(Double((d * 100).rounded()) / 100) }
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
