import Foundation
import ShutterCore
import ShutterMedia
import ShutterStorage

/// Carrying out what the capture state machine decides: each action goes to
/// the part that owns it, and each outcome comes back as a machine input and
/// as the answer of the requests bound to it.
extension CameraService {
    func apply(_ actions: [CaptureAction]) {
        for a in actions { perform(a) }
        if !pins.isEmpty { tidyPins(now: clock.now()) }
        // A press that stopped being pending without a capture (double tap,
        // shutdown press) is answered now.
        requests.answerUnbound(isPending: machine.isPending)
        applySettingsIfIdle()
        resumeCameraSwitchIfIdle()
        wakeup.notify()
    }

    private func perform(_ action: CaptureAction) {
        let now = clock.now()
        log.debug("action \(action)")
        switch action {
        case .startAutofocus:
            guard let cam = camera else { break }
            let af = Eventually<AutofocusResult>()
            autofocus = af
            let timeout = Duration.milliseconds(config.camera.afTimeoutMs)
            spawn { af.set(await cam.autofocus(timeout: timeout)) }
        case .keepFrames(let from):
            startClip(from: from)
        case .discardKeptFrames:
            dropUncommittedClip()
        case let .pinPressFrame(origin, at):
            pinPressFrame(origin: origin, at: at)
        case let .takePhoto(id, origin, pressedAt, _, .press):
            requests.bind(origin, to: id)
            inProgress[id] = "saving a photo"
            videoGap = .zero
            writePinnedPhoto(id: id, origin: origin, pressedAt: pressedAt)
        case let .takePhoto(id, origin, pressedAt, flash, .focused):
            requests.bind(origin, to: id)
            inProgress[id] = "taking a photo"
            pins[origin] = nil  // a flash photo of the press moment: taken focused
            videoGap = .zero
            let releasedAt = releaseTime(of: origin, pressedAt: pressedAt)
            let af = autofocus, cam = camera, photos = self.photos, discarded = lastDiscard
            autofocus = nil
            spawn {
                let result = await photos.take(camera: cam, autofocus: af, flash: flash)
                // The press's speculative clip is gone from the card before the photo is
                // reported: a tap leaves nothing else behind (and the card can be unmounted).
                await discarded?.value
                await self.photoDone(id: id, result: result, moment: "focused", pressedAt: pressedAt,
                                     releasedAt: releasedAt)
            }
        case let .takeVideoSnapshot(id, origin, at):
            requests.bind(origin, to: id)
            videoGap = .zero
            if pins[origin] != nil {
                inProgress[id] = "saving a photo"
                writePinnedPhoto(id: id, origin: origin, pressedAt: at)
            } else {
                inProgress[id] = "taking a photo from the video"
                pendingSnapshots.append((id, at, releaseTime(of: origin, pressedAt: at)))
            }
        case let .startRecording(id, origin, from, _):
            requests.bind(origin, to: id)
            inProgress[id] = "recording"
            commitClip(id: id, from: from)
        case let .stopRecording(id, at):
            if clip?.id == id, clip?.stopAt == nil {
                let end = min(at, now)
                clip?.stopAt = end
                clips.stop(at: end)
                inProgress[id] = "saving \(clip?.path.map { ($0 as NSString).lastPathComponent } ?? "a clip")"
            }
        case let .answers(origin, id):
            requests.bind(origin, to: id)
        case .led(let indication):
            statusPatternName = Self.name(indication)
            if let d = statusDriver { spawn { await d.show(indication) } }
        case .flashLED(let indication):
            flashPatternName = Self.name(indication)
            if let d = flashDriver { spawn { await d.show(indication) } }
        case let .refused(why, origin):
            counters.refusedPresses += 1
            let message = refusalMessage(why)
            log.info("\(origin) refused: \(message)")
            requests.answer(origin, .refused(message, busy: why == .busy || why == .alreadyRecording))
        case .failed(let e):
            counters.errors += 1
            lastError = e.message
            log.warning("capture failed: \(e.message)")
        case .probeStorage:
            spawn { await self.probeStorage() }
        case .flashModeChanged(let m):
            log.notice("flash mode: \(m.rawValue)")
            flashModeChanged(to: m)
        case .powerOff:
            log.notice("shutdown gesture: every file is saved; asking the system to power off")
            hooks.powerOff()
            requestExit(0)
        }
    }

    /// "busy: saving SHTR0012.MP4", "not ready: the camera is starting"...
    private func refusalMessage(_ r: CaptureRefusal) -> String {
        switch r {
        case .busy:
            return "busy: \(inProgressText), and one request is already waiting"
        case .alreadyRecording:
            return "busy: already \(inProgressText)"
        case .notReady: return "not ready: the camera is starting"
        case .fault(let code): return "refused: \(lastError ?? "error code \(code.rawValue)")"
        case .shuttingDown: return "refused: shutting down"
        case .notRecording: return "not recording"
        }
    }

    private var inProgressText: String {
        let doing = inProgress.sorted { $0.key.value < $1.key.value }.map(\.value)
        return doing.isEmpty ? "a capture is in progress" : doing.joined(separator: ", ")
    }

    static func name(_ s: StatusIndication) -> String { String("\(s)".prefix { $0 != "(" }) }
    static func name(_ f: FlashIndication) -> String { String("\(f)".prefix { $0 != "(" }) }

    // MARK: Stills

    /// A photo during a recording in the `focused` moment: the next video frame.
    func saveSnapshot(id: CaptureID, at: MonotonicTime, releasedAt: MonotonicTime, frame: Frame) {
        let photos = self.photos, info = camera?.info
        spawn {
            let result = await photos.save(frame, camera: info)
            await self.photoDone(id: id, result: result, moment: "video", pressedAt: at, releasedAt: releasedAt)
        }
    }

    func saveSnapshots(_ frame: Frame) {
        let waiting = pendingSnapshots
        pendingSnapshots.removeAll()
        for w in waiting { saveSnapshot(id: w.id, at: w.at, releasedAt: w.releasedAt, frame: frame) }
    }

    func photoDone(id: CaptureID, result: Result<SavedPhoto, CaptureError>, moment: String,
                   pressedAt: MonotonicTime, releasedAt: MonotonicTime) {
        inProgress[id] = nil
        let now = clock.now()
        var report: PhotoReport?
        switch result {
        case .success(let photo):
            let r = PhotoReport(path: photo.path, moment: moment,
                                pressToExposureMs: (photo.exposureStart - pressedAt).exactMilliseconds,
                                releaseToDurableMs: max(.zero, photo.durableAt - releasedAt).exactMilliseconds,
                                width: photo.size.width, height: photo.size.height)
            report = r
            lastPhoto = r
            counters.photos += 1
            lastFiles = [photo.path]
            log.notice("photo saved: \(photo.path) (\(r.width)x\(r.height), moment \(moment), press to exposure "
                       + "\(Self.ms(r.pressToExposureMs)) ms, release to durable \(Self.ms(r.releaseToDurableMs)) ms)")
            logStillReport()
            apply(machine.handle(.photoSaved(id: id, path: photo.path), at: now))
        case .failure(let e):
            lastError = e.message
            counters.errors += 1
            log.warning("photo failed: \(e.message)")
            apply(machine.handle(.photoFailed(id: id, e), at: now))
        }
        requests.resolve(id, result.map { [$0.path] }, at: now, photo: report)
        if isReady { publishStatus(readyStatusLine()) }
    }

    /// A figure for the log: one decimal.
    static func ms(_ v: Double) -> String { String(Double((v * 10).rounded()) / 10) }

    // MARK: Clips

    /// A press: start encoding from the frame exposed at the press, under a
    /// temporary name; a hold commits it, a tap discards it.
    private func startClip(from: MonotonicTime) {
        if clip?.id != nil { return }  // a recording is running
        clips.begin(from: from, kept: ring.frames(from: from), withAudio: micRunning)
        clip = ClipState(id: nil)
    }

    private func commitClip(id: CaptureID, from: MonotonicTime) {
        if clip == nil || clip?.id != nil { startClip(from: from) }
        clip?.id = id
        watchdog.encoderStarted(at: clock.now())
        let committed = clips.commit()
        spawn {
            let result = await committed.value
            await self.clipCommitted(id: id, result)
        }
    }

    private func clipCommitted(id: CaptureID, _ result: Result<(path: String, start: MonotonicTime), CaptureError>) {
        let now = clock.now()
        switch result {
        case .success(let (path, start)):
            if clip?.id == id {
                clip?.path = path
                clip?.start = start
                if clip?.stopAt == nil { inProgress[id] = "recording \((path as NSString).lastPathComponent)" }
            }
            log.notice("recording \(path) (from the press)")
            requests.started(id, path: path)
            apply(machine.handle(.recordingStarted(id: id), at: now))
        case .failure(let e):
            log.warning("recording refused: \(e.message)")
            if clip?.id == id { clip = nil }
            watchdog.encoderStopped()
            inProgress[id] = nil
            let discarded = clips.discard()
            spawn { await discarded.value }
            apply(machine.handle(.recordingFailed(id: id, e), at: now))
            requests.resolve(id, .failure(e), at: now)
        }
    }

    /// Once a frame past the stop time has arrived (or a moment passed), finalise.
    func finishClipIfStopped(now: MonotonicTime, frameAfterStop: Bool) {
        guard let c = clip, c.id != nil, let stop = c.stopAt else { return }
        if frameAfterStop || now >= stop + .milliseconds(250) { finishClip() }
    }

    /// Finalises the recording off the actor; the outcome comes back to `clipFinished`.
    func finishClip() {
        guard let c = clip, let id = c.id else { return }
        clip = nil
        let finished = clips.finish()
        spawn {
            let outcome = await finished.value
            await self.clipFinished(id: id, start: c.start, outcome)
        }
    }

    private func clipFinished(id: CaptureID, start: MonotonicTime?, _ outcome: ClipRecorder.Outcome) {
        watchdog.encoderStopped()
        inProgress[id] = nil
        let now = clock.now()
        let paths = outcome.paths, summary = outcome.summary
        if let e = summary.error {
            counters.errors += 1
            lastError = e.message
            if !paths.isEmpty { counters.clips += 1; lastFiles = paths }
            let code: CaptureError.Code = NoSpace.means(e.errno ?? 0) ? .storageFull : .encoder
            let error = CaptureError(code, "\(e.message) (kept: \(paths.joined(separator: ", ")))")
            apply(machine.handle(.recordingFailed(id: id, error), at: now))
            requests.resolve(id, paths.isEmpty ? .failure(error) : .success(paths), at: now, clipStart: start)
        } else {
            counters.clips += 1
            lastFiles = paths
            if let first = paths.first { previewTap?.savePoster(for: id, beside: first) }
            log.notice("clip saved: \(paths.joined(separator: ", ")) (\(summary.framesWritten) frames, \(summary.duration.milliseconds) ms)")
            apply(machine.handle(.recordingFinalised(id: id, paths: paths), at: now))
            requests.resolve(id, .success(paths), at: now, clipStart: start)
        }
        if isReady { publishStatus(readyStatusLine()) }
    }

    /// The press was not a hold: stop encoding and delete the temporary file.
    func dropUncommittedClip() {
        guard let c = clip, c.id == nil else { return }
        clip = nil
        let discarded = clips.discard()
        lastDiscard = discarded
        spawn { await discarded.value }
    }
}
