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

/// Is the service well: the camera delivers frames, the card is writable, the
/// encoder keeps up (WatchdogPolicy decides); READY=1 once camera and card are
/// up, WATCHDOG=1 while they stay so, STATUS= with a human line. The card is
/// prepared at start and probed every few seconds, each a job.
final class Health {
    private let ctx: ServiceContext
    private let jobs: Jobs
    /// Carries out the restarts the watchdog decides.
    private let supervisor: CameraSupervisor
    private(set) var watchdog: WatchdogPolicy
    private(set) var isReady = false
    /// A frame has come since the start (READY waits for it). Whether the camera is
    /// well now is the capture state machine's `cameraLost` fault: one owner.
    private(set) var framesSeen = false
    /// The card was checked at least once (READY waits for it).
    private var storageChecked = false
    private var nextProbe: MonotonicTime
    /// `upload.keepDays`' next sweep (hourly).
    private var nextExpiry: MonotonicTime?
    /// The watchdog's heartbeat: evaluated at least this often (pings, status).
    private var nextBeat: MonotonicTime
    static let beat = Duration.milliseconds(500)
    private(set) var freeBytes: UInt64?
    private(set) var cameraRestarts = 0
    private var statusLine = ""

    init(ctx: ServiceContext, jobs: Jobs, supervisor: CameraSupervisor) {
        self.ctx = ctx
        self.jobs = jobs
        self.supervisor = supervisor
        let c = ctx.config
        var wd = WatchdogConfiguration()
        wd.frameTimeout = .milliseconds(c.watchdog.frameTimeoutMs)
        wd.initialBackoff = .milliseconds(c.watchdog.restartBackoffMs)
        wd.maxConsecutiveRestartFailures = c.watchdog.maxRestarts
        watchdog = WatchdogPolicy(configuration: wd, startedAt: ctx.now, fps: c.video.fps)
        nextProbe = ctx.now
        nextBeat = ctx.now
    }

    var nextDeadline: MonotonicTime {
        [watchdog.nextDeadline, nextProbe, nextBeat].compactMap { $0 }.min()!
    }

    // MARK: The card

    /// Before the loop starts: creates the root (unless it must be a mount point),
    /// removes temp clips a power cut left and cuts a clip open at the cut back to its
    /// last whole fragment. Returns the clips to finish (that one, and any whose finish was
    /// cut off): the loop finishes them as a job once running, so a long clip on a slow
    /// card does not hold up READY.
    static func prepareStorage(_ ctx: ServiceContext) async -> [String] {
        let storage = ctx.storage, log = ctx.log, create = !ctx.config.storage.requireMountPoint
        return await Blocking.run(on: Self.storageQueue) {
            if create {
                // A plain directory (make run, a test, a card mounted at boot): create it.
                // With requireMountPoint the service waits for the card instead.
                try? FileManager.default.createDirectory(atPath: storage.root, withIntermediateDirectories: true)
            }
            ClipFiles.removeLeftovers(in: storage.root)
            let interrupted = ClipFinisher.removeLeftovers(in: storage.dcim)
            let last = Self.recoverLastClip(in: storage.dcim, log: log)
            return Set(interrupted + [last].compactMap { $0 }).sorted()
        }
    }

    /// Every file-system call of the probe runs here, in order.
    static let storageQueue = DispatchQueue(label: "shutter.storage")

    /// A clip open when the power went (or the process was killed inside a write)
    /// may end in a partial fragment: cut it back to its last whole one.
    /// Returns the clip, when there is one left to keep.
    private static func recoverLastClip(in dcim: String, log: Log) -> String? {
        guard let e = try? FileManager.default.subpathsOfDirectory(atPath: dcim) else { return nil }
        let clips = e.filter { $0.hasSuffix(".MP4") && !$0.contains("/.") }.sorted()
        guard let last = clips.last else { return nil }
        let path = PlainIO.path(dcim, last)
        // A name reserved just before a crash, never written: nothing to keep (its
        // number stays used, the counter is ahead of it).
        if let size = PlainIO.fileSize(path), size == 0 {
            unlink(path)
            log.notice("removed \(path): an empty clip left by a crash")
            return nil
        }
        do {
            let cut = try FragmentedMP4Recovery.truncateToLastWholeFragment(path: path)
            if cut > 0 { log.notice("repaired \(path): cut \(cut) bytes of an unfinished fragment") }
        } catch {
            log.warning("could not check \(path) for an unfinished fragment: \(error)")
        }
        return path
    }

    /// Every 5 s, and when the machine asks (after a storage error).
    func probeStorageIfDue(now: MonotonicTime, force: Bool = false) {
        guard force || now >= nextProbe else { return }
        nextProbe = now + .seconds(5)
        let storage = ctx.storage
        // upload.keepDays: files whose copy was verified that long ago, by a trusted clock only.
        var expiry: Double?
        let keepDays = ctx.config.upload.enabled ? ctx.config.upload.keepDays : 0
        if keepDays > 0, now >= nextExpiry ?? now {
            nextExpiry = now + .seconds(3600)
            let wall = ctx.wallClock.now()
            if wall.isTrusted { expiry = Double(wall.secondsSinceEpoch) - Double(keepDays) * 86400 }
        }
        jobs.run(on: Self.storageQueue) { [expiry] in
            if let expiry { storage.deleteUploaded(verifiedBefore: expiry) }
            do {
                // Healthy means a photo fits too: a full card keeps its LED code
                // until space is freed (with delete-oldest-videos this makes room).
                _ = try storage.ensureSpace(for: .photo)
                return .storageProbed(.success(try storage.checkHealth()))
            } catch let e as StorageError {
                return .storageProbed(.failure(e))
            } catch {
                return .storageProbed(.failure(StorageError(.ioError, "\(error)")))
            }
        }
    }

    /// The probe came back: the machine's input, if the card's state changed.
    func storageProbed(_ result: Result<FileSystemSpace, StorageError>, state: CaptureState, journal: inout Journal)
        -> CaptureInput?
    {
        let now = ctx.now
        storageChecked = true
        switch result {
        case .success(let space):
            freeBytes = space.availableBytes
            watchdog.storageOK(at: now)
            if case .storageUnavailable = state { return .storageRestored }
            return nil
        case .failure(let e):
            watchdog.storageFailed(at: now)
            if journal.lastError != e.message { ctx.log.warning("storage: \(e.message)") }
            journal.lastError = e.message
            publish("storage problem: \(e.message)")
            if case .storageUnavailable = state { return nil }
            return .fault(CaptureFault(e))
        }
    }

    // MARK: The camera

    /// A frame: the watchdog's progress. `wasWell`: the camera was well before it (if
    /// not, frames coming again are said once).
    func frameArrived(now: MonotonicTime, exposure: Duration?, wasWell: Bool, lastError: String?) {
        watchdog.frameArrived(at: now, exposure: exposure)
        framesSeen = true
        if !wasWell, isReady || lastError != nil { ctx.log.notice("camera frames are coming") }
    }

    func cameraStarted(restart: Bool) {
        if restart { watchdog.cameraRestartSucceeded(at: ctx.now) }
    }

    /// The camera could not start: no camera at boot waits quietly, never giving up
    /// (LED code 2, STATUS "waiting for camera"); a failed restart counts.
    func cameraUnavailable(absent: Bool, restart: Bool) {
        if absent && !isReady {
            watchdog = WatchdogPolicy(configuration: watchdog.configuration, startedAt: ctx.now, fps: ctx.config.video.fps)
        } else if restart {
            watchdog.cameraRestartFailed(at: ctx.now)
        }
        publish("waiting for camera")
    }

    /// The watchdog's restart, carried out (a job): the stream stops and starts again as
    /// `target` says (the control plane's: the camera in use with the controls it has).
    func restartCamera(_ target: CameraTarget) {
        let supervisor = self.supervisor
        jobs.add {
            await supervisor.restart(target)
            return .nothing
        }
    }

    /// A deliberate reopen (a switch, a restart for a setting) is not a stall.
    func reopenBegan() { watchdog.cameraReopenBegan(at: ctx.now) }
    func reopenEnded() { watchdog.cameraReopenEnded(at: ctx.now) }

    func encoderStarted() { watchdog.encoderStarted(at: ctx.now) }
    func encoderStopped() { watchdog.encoderStopped() }
    func encoderProgress(at t: MonotonicTime) { watchdog.encoderProgress(at: t) }

    /// What the watchdog says now; a restart is counted here.
    func evaluate(now: MonotonicTime) -> WatchdogDecision {
        nextBeat = now + Self.beat
        let d = watchdog.evaluate(now: now)
        switch d {
        case .healthy:
            if isReady { ctx.hooks.watchdogPing() }
        case let .restartCamera(attempt, backoff):
            cameraRestarts += 1
            if isReady || attempt == 1 {
                ctx.log.warning("no camera frames: restart attempt \(attempt) (after \(backoff.milliseconds) ms backoff)")
            }
            publish(isReady ? "camera stalled, restarting (attempt \(attempt))" : "waiting for camera")
        case .waiting, .unhealthy:
            break
        case .giveUp(let reason):
            ctx.log.error("giving up: \(reason.message); exiting \(reason.exitCode) so systemd restarts the service")
            publish("failed: \(reason.message)")
        }
        return d
    }

    // MARK: READY and STATUS

    /// Camera frames and a probed card (a full or missing card does not hold READY
    /// back: the service is up and shows the storage code). True when it became ready now.
    func becomeReadyIfPossible(line: String, cameraWell: Bool) -> Bool {
        guard !isReady, cameraWell, storageChecked else { return false }
        isReady = true
        ctx.log.notice(line)
        statusLine = line
        ctx.hooks.ready(line)
        return true
    }

    func publish(_ line: String) {
        guard line != statusLine else { return }
        statusLine = line
        ctx.hooks.status(line)
    }

    func readyLine(photos: Int, clips: Int) -> String {
        var s = "ready, \(photos) photo\(photos == 1 ? "" : "s"), \(clips) clip\(clips == 1 ? "" : "s")"
        if let f = freeBytes { s += cFormat(", %.1f GB free", Double(f) / 1e9) }
        return s
    }
}
