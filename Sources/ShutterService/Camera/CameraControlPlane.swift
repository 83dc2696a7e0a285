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
/// and the restart a setting needs, each with its rollback. One file per
/// operation family in this folder: the requests on the settings
/// (`RuntimeSettingsRequests`), `TapToFocus`, `CameraSwitch`, `CameraReopen`
/// (and the camera's life), `SettingsStateFile`, and what `get` and `status`
/// show (`ControlView`).
///
/// Why between captures, when libcamera would take a control with the next
/// request: the exposure and white balance loops converge over several frames,
/// so a change landing during a still's warm-up gives a photo exposed between
/// two settings, and one landing mid-clip a visible jump. A change is for the
/// next capture: it waits while a photo, a press or a clip is in progress.
///
/// A request that changes something is an operation (`ControlOp`) that moves through
/// its steps as the loop tells it what happened (`resume`, the job results):
///
///     set/reset/focus: change → [reopen if the opening changed → first frame]
///                      → [camera has the controls] → state file → [AF cycle] → reply
///     camera switch:   list → wait for captures → reopen → first frame → state file → list → reply
///
/// A reopen that fails starts the previous camera and opening again and puts
/// the settings back: the service never ends up without a camera because of a request.
///
/// One owner per fact: the settings own what is asked for, the flash mode and
/// torch included (the capture machine is given `lights` with every input);
/// `target` is the camera, opening and controls in force, which every
/// supervisor command carries.
final class CameraControlPlane {
    /// What the loop carries out for the plane.
    enum Effect {
        case machine(CaptureInput)
        /// The camera is being reopened: captures wait, the watchdog does not count it as a stall.
        case reopening(status: String)
    }

    let ctx: ServiceContext
    let jobs: Jobs
    let supervisor: CameraSupervisor
    /// Rereads the configuration (SIGHUP); nil where there is no file to reread.
    let reloadConfig: (@Sendable () throws(ConfigError) -> ShutterConfig)?
    /// The configuration's settable keys with the runtime changes over them.
    /// Live watchers are told each change where it happens.
    var settings: RuntimeSettings {
        didSet { live.settingsChanged(from: oldValue, to: settings) }
    }
    let live: LiveReport
    /// Changed settings not yet applied (a capture was in progress).
    var unapplied = false
    /// The flash mode the flash LED last showed (a double tap's, or one set): a new mode
    /// is shown between captures.
    var flashShown: FlashMode
    /// The camera in use (its index as the last start reported), what it was
    /// opened with and the controls it has or is being given: the supervisor's
    /// commands carry it.
    var target: CameraTarget
    var delivery = ControlsDelivery()
    /// The camera that streams (as the supervisor last reported), the newest
    /// frame's metadata and the board's cameras.
    var camera: (any CameraDevice)?
    var lastMetadata: FrameMetadata?
    var cameras: [CameraListing] = []
    /// A reopen is under way: frames still coming from the camera being stopped are not this camera's.
    var reopening: Bool { ops.reopenPending }
    var report = CameraReportLog()
    var ops = ControlOps()

    init(ctx: ServiceContext, jobs: Jobs, supervisor: CameraSupervisor, live: LiveReport,
         reloadConfig: (@Sendable () throws(ConfigError) -> ShutterConfig)?) {
        self.ctx = ctx
        self.jobs = jobs
        self.supervisor = supervisor
        self.live = live
        self.reloadConfig = reloadConfig
        settings = RuntimeSettings(base: ctx.config)
        flashShown = FlashMode(ctx.config.flash.mode)
        target = CameraTarget(ctx.config)
    }

    /// The flash mode and torch in force: the settings' (the machine is given them).
    var lights: CaptureLights {
        CaptureLights(flashMode: FlashMode(settings.effective.flash.mode), videoTorch: settings.effective.video.torch)
    }

    /// The controls the camera is to have (what it has, or is being given).
    var controls: CameraControls { target.controls }

    /// What the camera is opened with.
    var opening: CameraOpening { target.opening }

    // MARK: Taking effect

    /// After a change: reopen when the opening changed (refused while another
    /// reopen is asked for), else mark the settings to apply.
    func takeEffect(_ id: Int) -> [Effect] {
        guard let op = ops[id] else { return [] }
        let wanted = CameraOpening(settings.effective)
        if wanted != opening {
            if ops.reopenAsked {
                return refuseReopen(id, "busy: a camera switch or restart is in progress; try again", busy: true)
            }
            op.reopen = ControlOp.Reopen(index: nil, opening: wanted, what: Self.describeChange(from: opening, to: wanted))
            op.step = .waitingForCaptures
        } else {
            unapplied = true
            op.step = .waitingForControls
        }
        return []
    }

    private func refuseReopen(_ id: Int, _ message: String, busy: Bool) -> [Effect] {
        guard let op = ops.remove(id) else { return [] }
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
    func resume(betweenCaptures: Bool, cameraHealthy: Bool, now: MonotonicTime) -> [Effect] {
        var effects: [Effect] = []
        // Twice: an operation that went on may have left settings to apply (after a reopen).
        for _ in 0..<2 {
            effects += resumeOnce(betweenCaptures: betweenCaptures, cameraHealthy: cameraHealthy, now: now)
            if !unapplied || !betweenCaptures { break }
        }
        return effects
    }

    private func resumeOnce(betweenCaptures: Bool, cameraHealthy: Bool, now: MonotonicTime) -> [Effect] {
        var effects: [Effect] = []
        delivery.expire(now: now)
        if betweenCaptures, lights.flashMode != flashShown {
            flashShown = lights.flashMode
            effects.append(.machine(.flashModeSet(flashShown)))
        }
        if unapplied, betweenCaptures, !reopening {
            unapplied = false
            let wanted = settings.effective.camera.controls
            if target.controls != wanted {
                target.controls = wanted
                giveControls()
            }
        }
        for id in ops.ids {
            effects += advance(id, betweenCaptures: betweenCaptures, cameraHealthy: cameraHealthy, now: now)
        }
        return effects
    }

    /// The earliest time an operation waits for (the first frame's bound).
    var nextDeadline: MonotonicTime? {
        let waits = ops.all.compactMap { op -> MonotonicTime? in
            if case .waitingForFrames(let t) = op.step { return t }
            return nil
        }
        return (waits + [delivery.deadline].compactMap { $0 }).min()
    }

    private func advance(_ id: Int, betweenCaptures: Bool, cameraHealthy: Bool, now: MonotonicTime) -> [Effect] {
        guard let op = ops[id] else { return [] }
        switch op.step {
        case .start, .listing, .reopening, .saving, .focusing, .listingForReply:
            return []  // waits for a job
        case .waitingForCaptures:
            guard let reopen = op.reopen else { return [] }
            // The first reopen asked for goes first.
            if let first = ops.firstReopen, first != id { return [] }
            guard betweenCaptures, !reopening else {
                if !betweenCaptures, !op.saidWaiting {
                    op.saidWaiting = true
                    let what = op.target == nil ? "camera restart for \(reopen.what)" : reopen.what
                    ctx.log.notice("\(what): waiting for the capture in progress")
                }
                return []
            }
            op.step = .reopening(cameraStarted: false)
            let message: String
            // A switch keeps the controls; a restart for a setting opens with the new ones.
            var wanted = CameraTarget(index: reopen.index ?? target.index, opening: reopen.opening,
                                      controls: target.controls)
            if op.isSwitch {
                ctx.log.notice("camera switch: \(op.from) to \(op.target?.summary ?? "?")")
                message = "switching camera"
            } else {
                ctx.log.notice("camera restart for \(reopen.what)")
                wanted.controls = settings.effective.camera.controls
                message = "restarting the camera"
            }
            startReopen(op: id, wanted)
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
            guard unapplied || delivery.isQuiet else { return [] }
            save(op: id)
            return []
        }
    }

    func finish(_ id: Int, _ reply: ControlReply) {
        ops.remove(id)?.reply?.send(reply)
    }

    /// Stopping: nobody waits for an operation that will not end.
    func failAll(_ message: String) {
        for id in ops.ids { finish(id, .failure(message)) }
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
