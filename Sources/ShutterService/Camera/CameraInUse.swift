// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// The camera in use and its life: the device that streams (as the supervisor
/// last reported), the newest frame's metadata, the target it runs with, the
/// controls being given to it, what it did with them (`CameraReportLog`) and the
/// board's cameras. Every job on the camera leaves from here: the controls, a
/// reopen, the listing, an AF cycle.
///
/// It decides nothing about the settings: `ControlOperations` tells it which
/// controls to give and when to reopen.
final class CameraInUse {
    let ctx: ServiceContext
    let jobs: Jobs
    let supervisor: CameraSupervisor
    /// The camera that streams (as the supervisor last reported) and the newest frame's metadata.
    private(set) var camera: (any CameraDevice)?
    private(set) var lastMetadata: FrameMetadata?
    /// The camera in use (its index as the last start reported), what it was
    /// opened with and the controls it has or is being given: the supervisor's
    /// commands carry it.
    private(set) var target: CameraTarget
    private var delivery = ControlsDelivery()
    private var report = CameraReportLog()
    /// The board's cameras, as last listed.
    private(set) var cameras: [CameraListing] = []

    init(ctx: ServiceContext, jobs: Jobs, supervisor: CameraSupervisor) {
        self.ctx = ctx
        self.jobs = jobs
        self.supervisor = supervisor
        target = CameraTarget(ctx.config)
    }

    /// The controls the camera is to have (what it has, or is being given).
    var controls: CameraControls { target.controls }

    /// What the camera is opened with.
    var opening: CameraOpening { target.opening }

    // MARK: Its life

    /// Before the loop: the camera a switch chose and the state file remembers
    /// (`CameraPick`, found among the listed cameras by the caller), or nil for
    /// the configuration's. Returns what the supervisor starts first.
    func firstTarget(index: Int?) -> CameraTarget {
        target.index = index
        return target
    }

    /// Before the loop: the state file's settings are what the camera opens with.
    func opens(with effective: ShutterConfig) {
        target.controls = effective.camera.controls
        target.opening = CameraOpening(effective)
    }

    /// The supervisor started `camera` as `started` says: it is the target in
    /// use (after a failed reopen, the one it went back to).
    func started(_ camera: any CameraDevice, _ started: CameraTarget, restart: Bool) {
        self.camera = camera
        target = started
        report.started(camera: camera, opening: started.opening, restart: restart, log: ctx.log)
        listCameras(for: nil)
    }

    /// The camera stopped or could not start.
    func lost() {
        delivery.cameraLost()
        camera = nil
        lastMetadata = nil
    }

    func frameArrived(_ f: Frame) {
        lastMetadata = f.metadata
        delivery.frameArrived(at: f.timestamp)
    }

    func photoSaved() { report.still(camera: camera, opening: opening, log: ctx.log) }

    /// Opens `wanted` for operation `op`; the supervisor goes back to the target in
    /// use when it does not start (`CameraSupervisor.reopen`).
    func reopen(_ wanted: CameraTarget, op: Int) {
        camera = nil
        lastMetadata = nil
        let supervisor = self.supervisor, back = target
        // The job hands the order over; the outcome comes back as the supervisor's `.reopened` event.
        jobs.add {
            await supervisor.reopen(wanted, back: back, op: op)
            return .nothing
        }
    }

    // MARK: The controls

    /// The camera is to have `wanted`: given between captures, one change at a time.
    func give(_ wanted: CameraControls) {
        if target.controls != wanted {
            target.controls = wanted
            giveControls()
        }
    }

    /// Gives the camera `target.controls`, one change at a time; a newer one follows when it is done.
    private func giveControls() {
        guard !delivery.isGiving, let cam = camera, cam.controlReport.asked != target.controls else { return }
        let controls = target.controls
        delivery.give(controls)
        jobs.add {
            await cam.apply(controls)
            return .controlsApplied
        }
    }

    func controlsApplied(now: MonotonicTime) {
        delivery.given(now: now)
        // What the camera lacks may have changed with the controls: said once, as at a start.
        if let lacking = camera?.controlReport.lacking { report.lacking(lacking, log: ctx.log) }
        giveControls()
    }

    /// A camera without frames holds no reply.
    func expire(now: MonotonicTime) { delivery.expire(now: now) }

    /// Nothing being given, nothing settling: a reply may go.
    var controlsQuiet: Bool { delivery.isQuiet }

    /// When the controls given settle at the latest.
    var controlsDeadline: MonotonicTime? { delivery.deadline }

    /// An AF cycle of its own for operation `op`, as the demos' tap does; bounded, it never hangs the reply.
    func autofocus(op: Int) {
        guard let cam = camera else { return }
        jobs.add { .focused(op: op, await cam.autofocus(timeout: .seconds(2))) }
    }

    // MARK: The board's cameras

    func listCameras(for op: Int?) {
        let list = ctx.roles.listCameras
        jobs.add {
            do {
                return .camerasListed(op: op, .success(try await list()))
            } catch {
                return .camerasListed(op: op, .failure(error))
            }
        }
    }

    /// The cameras were listed (for `status`, and for the request that asked).
    func listed(_ result: Result<[CameraListing], any Error>) {
        if case .success(let list) = result { cameras = list }
    }

    /// The camera in use among the listed cameras (by libcamera's id).
    var inUseIndex: Int? {
        guard let id = camera?.info.id else { return nil }
        return cameras.firstIndex { $0.id == id }
    }

    /// What `shutterctl camera [next|INDEX|MODEL]` asks of the cameras just listed.
    enum Choice {
        /// Answered here: the list, the camera already in use, or why not.
        case answer(ControlReply)
        /// Another camera (or the one in use, which is not well): its index in `cameras`.
        case switchTo(Int)
    }

    /// `argument` nil lists the cameras; else the camera it names, among `cameras`.
    func choose(_ argument: String?, cameraHealthy: Bool) -> Choice {
        let inUse = inUseIndex
        guard let argument else {
            var reply = ControlReply(ok: true)
            reply.cameras = cameras.map { c in
                var c = c
                c.inUse = c.index == inUse
                return c
            }
            return .answer(reply)
        }
        guard let choice = CameraChoice(parsing: argument) else {
            return .answer(.failure("camera needs next, an index (0, 1, ...) or a model name, not \"\(argument)\"; "
                                    + "`shutterctl camera` lists them"))
        }
        let index: Int
        switch choice.pick(from: cameras, inUse: inUse) {
        case .success(let i): index = i
        case .failure(let e): return .answer(.failure("\(e.message); `shutterctl camera` lists them"))
        }
        if index == inUse, cameraHealthy {
            var reply = ControlReply(ok: true)
            reply.camera = cameras[index]
            reply.note = "camera \(cameras[index].summary) is already in use"
            return .answer(reply)
        }
        return .switchTo(index)
    }
}
