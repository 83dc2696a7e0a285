// SPDX-License-Identifier: BSD-2-Clause
import Dispatch
import ShutterCore
import ShutterStorage

/// The camera control plane: which camera runs with what. Runtime settings
/// (`shutterctl set | get | reset`, SIGHUP), tap-to-focus, the camera switch
/// and the restart a setting needs, each with its rollback. The plane is the
/// loop's way in and the parts' owner; each part owns its state:
///
/// - `AskedSettings`: what is asked for (the runtime settings, the flash mode and
///   torch included: the capture machine is given its `lights` with every input),
///   whether the camera still lacks it, the flash mode the LED last showed;
/// - `CameraInUse`: the camera in use and its life: the device, its newest frame's
///   metadata, the `CameraTarget` every supervisor command carries, the controls
///   being given (`ControlsDelivery`), what it did with them (`CameraReportLog`),
///   the board's cameras; every job on the camera;
/// - `ControlOperations`: the requests under way (`ControlOp`), moved through
///   their steps (wait for the captures, reopen and its rollback, first frame,
///   controls given, state file, AF cycle, reply);
/// - `SettingsStateFile`: the state file, written after every change, read before the loop;
/// - `ControlView`: what `get` and `status` show (it keeps nothing).
///
/// A request comes here and goes to the part it changes; an event for one part
/// goes to it (`inUse.frameArrived`, `operations.saved`), one for several comes
/// here (`started`, `listed`). Everything runs on the service loop.
final class CameraControlPlane {
    /// What the loop carries out for the plane.
    enum Effect {
        case machine(CaptureInput)
        /// The camera is being reopened: captures wait, the watchdog does not count it as a stall.
        case reopening(status: String)
    }

    let ctx: ServiceContext
    let jobs: Jobs
    /// Rereads the configuration (SIGHUP); nil where there is no file to reread.
    let reloadConfig: (@Sendable () throws(ConfigError) -> ShutterConfig)?
    let asked: AskedSettings
    let inUse: CameraInUse
    let operations: ControlOperations

    init(ctx: ServiceContext, jobs: Jobs, supervisor: CameraSupervisor, live: LiveReport,
         reloadConfig: (@Sendable () throws(ConfigError) -> ShutterConfig)?) {
        self.ctx = ctx
        self.jobs = jobs
        self.reloadConfig = reloadConfig
        asked = AskedSettings(ctx: ctx, live: live)
        inUse = CameraInUse(ctx: ctx, jobs: jobs, supervisor: supervisor)
        operations = ControlOperations(ctx: ctx, asked: asked, inUse: inUse,
                                       stateFile: SettingsStateFile(storage: ctx.storage, log: ctx.log, jobs: jobs))
    }

    /// What `get` and `status` show.
    var view: ControlView { ControlView(asked: asked, inUse: inUse) }

    // MARK: Requests

    func set(_ key: String, to value: JSONValue, reply: Reply) -> [Effect] {
        guard let before = asked.set(key, to: value, reply: reply) else { return [] }
        return operations.begin(.set(key: key), reply: reply, before: before)
    }

    func get(_ key: String?) -> ControlReply { view.get(key) }

    func reset(_ key: String?, reply: Reply) -> [Effect] {
        guard let (before, reset) = asked.reset(key, reply: reply) else { return [] }
        return operations.begin(.reset(key: key, reset: reset), reply: reply, before: before)
    }

    /// `shutterctl focus X Y | reset`: the windows change, then an AF cycle of its
    /// own where the lens is in auto mode.
    func focus(_ request: ServiceCommand.FocusRequest, reply: Reply) -> [Effect] {
        guard let (before, autofocus, note) = asked.pointOfInterest(request, reply: reply) else { return [] }
        return operations.begin(.focus(autofocus: autofocus), reply: reply, before: before, notes: [note])
    }

    /// `shutterctl camera [next|INDEX|MODEL]`: list the cameras, or switch to one.
    func cameraRequest(_ argument: String?, reply: Reply) {
        operations.switchCamera(argument, reply: reply)
    }

    /// A double tap asked for the next flash mode: kept in the state file.
    func flashModeChanged(to mode: FlashMode) {
        if asked.flashModeChanged(to: mode) { operations.save(op: nil) }
    }

    /// SIGHUP: rereads the configuration file (a job).
    func reload() {
        guard let reload = reloadConfig else {
            ctx.log.notice("SIGHUP: no configuration file to reread in this process")
            return
        }
        ctx.log.notice("SIGHUP: rereading the configuration")
        jobs.run(on: SettingsStateFile.queue) {
            .configReread(Result { () throws(ConfigError) -> ShutterConfig in try reload() })
        }
    }

    /// The configuration was reread: its settable keys take effect, through a
    /// reopen when the opening changed.
    func reread(_ result: Result<ShutterConfig, ConfigError>) -> [Effect] {
        guard let previous = asked.reread(result) else { return [] }
        guard asked.opening != inUse.opening else {
            asked.unapplied = true
            return []
        }
        return operations.begin(.reload, reply: nil, before: previous)
    }

    // MARK: Events for several parts

    /// The supervisor started `camera` as `started` says: it is the target in
    /// use (after a failed reopen, the one it went back to). Settings changed
    /// since the command left are given between captures.
    func started(_ camera: any CameraDevice, _ started: CameraTarget, restart: Bool) {
        operations.cameraStarted()
        inUse.started(camera, started, restart: restart)
        asked.unapplied = true
    }

    /// The cameras were listed: for `status`, and for the request that asked.
    func listed(op: Int?, _ result: Result<[CameraListing], any Error>, cameraHealthy: Bool) {
        inUse.listed(result)
        operations.listed(op: op, result, cameraHealthy: cameraHealthy)
    }

    // MARK: Before the loop

    /// The state file's changes over the configuration, which the camera opens
    /// with. Returns the camera a switch chose.
    func load() async -> CameraPick? {
        guard let contents = await operations.stateFile.load() else { return nil }
        asked.adopt(changes: contents.changes, camera: contents.camera)
        inUse.opens(with: asked.settings.effective)
        if contents.dirty { operations.save(op: nil) }
        return contents.camera
    }

    /// The camera the supervisor starts first (`CameraInUse.firstTarget`).
    func firstTarget(index: Int?) -> CameraTarget { inUse.firstTarget(index: index) }
}
