import Foundation
import ShutterCore
import ShutterMedia
import ShutterStorage

/// Carrying out what the capture state machine decides.
extension CameraService {
    func apply(_ actions: [CaptureAction]) {
        for a in actions { perform(a) }
    }

    private func perform(_ action: CaptureAction) {
        let now = clock.now()
        log.debug("action \(action)")
        switch action {
        case .startAutofocus:
            if let cam = camera {
                let timeout = Duration.milliseconds(config.camera.afTimeoutMs)
                autofocusTask = Task { await cam.autofocus(timeout: timeout) }
            }
        case .keepFrames(let from):
            startClip(from: from)
        case .discardKeptFrames:
            dropUncommittedClip()
        case let .takePhoto(id, pressedAt, flash):
            origins[id] = pressedAt
            takePhoto(id: id, flash: flash)
        case let .takeVideoSnapshot(id, at):
            origins[id] = at
            photosInFlight += 1
            pendingSnapshots.append(id)
        case let .startRecording(id, from, _):
            origins[id] = from
            commitClip(id: id, from: from)
        case let .stopRecording(id, at):
            if clip?.id == id {
                clip?.stopAt = min(at, now)
                scheduleWake()
            }
        case .led(let indication):
            statusPatternName = Self.name(indication)
            if let d = statusDriver { Task { await d.show(indication) } }
        case .flashLED(let indication):
            flashPatternName = Self.name(indication)
            if let d = flashDriver { Task { await d.show(indication) } }
        case .refused(let why):
            counters.refusedPresses += 1
            log.info("press refused: \(why)")
            failWaiters(after: now - .seconds(5), "refused: \(why)")
        case .failed(let e):
            counters.errors += 1
            lastError = e.message
            log.warning("capture failed: \(e.message)")
        case .probeStorage:
            Task { await self.probeStorage() }
        case .flashModeChanged(let m):
            log.notice("flash mode: \(m.rawValue)")
        case .powerOff:
            log.notice("shutdown gesture: every file is saved; asking the system to power off")
            hooks.powerOff()
            finish(exit: 0)
        }
    }

    static func name(_ s: StatusIndication) -> String {
        let text = "\(s)"
        return String(text.prefix { $0 != "(" })
    }

    static func name(_ f: FlashIndication) -> String {
        let text = "\(f)"
        return String(text.prefix { $0 != "(" })
    }

    // MARK: Stills

    private func takePhoto(id: CaptureID, flash: Bool) {
        photosInFlight += 1
        let af = autofocusTask
        autofocusTask = nil
        let flashDriver = self.flashDriver
        Task {
            _ = await af?.value  // bounded by afTimeoutMs
            guard let cam = self.camera else {
                self.photoDone(id: id, result: .failure(CaptureError(.camera, "no camera: the photo was not taken")))
                return
            }
            if flash { await flashDriver?.show(LEDPattern.steady(true)) }
            let frame: Frame
            do {
                frame = try await cam.captureStill()
            } catch {
                if flash { await flashDriver?.show(LEDPattern.steady(false)) }
                self.photoDone(id: id, result: .failure(CaptureError(.camera, "still capture failed: \(error)")))
                return
            }
            if flash { await flashDriver?.show(LEDPattern.steady(false)) }
            self.savePhoto(id: id, frame: frame, flash: flash)
        }
    }

    func savePhoto(id: CaptureID, frame: Frame, flash: Bool) {
        guard let encoder = stillEncoder else {
            photoDone(id: id, result: .failure(CaptureError(.encoder, stillEncoderError ?? "no still encoder")))
            return
        }
        var meta = StillMetadata(
            make: config.exif.make.isEmpty ? (camera?.info.make ?? "Shutter") : config.exif.make,
            model: config.exif.model.isEmpty ? (camera?.info.model ?? "Camera") : config.exif.model,
            software: "Shutter",
            captureTime: wallClock.now().adding(frame.timestamp - clock.now()),
            focalLengthMillimetres: config.exif.focalLengthMm, fNumber: config.exif.fNumber,
            rotation: roles.cameraAppliesTransform ? 0 : config.camera.rotation,
            hflip: roles.cameraAppliesTransform ? false : config.camera.hflip,
            vflip: roles.cameraAppliesTransform ? false : config.camera.vflip)
        meta.take(frame.metadata)
        let metadata = meta
        let storage = self.storage
        Task {
            let result: Result<String, CaptureError> = await Blocking.run(on: photoQueue) {
                do {
                    _ = try storage.ensureSpace(for: .photo)
                    let still = try encoder.encode(frame, metadata: metadata)
                    let name = try storage.savePhoto(bytes: still.jpeg)
                    return .success(name.path)
                } catch let e as StorageError {
                    return .failure(CaptureError(e))
                } catch {
                    return .failure(CaptureError(.encoder, "could not save the photo: \(error)"))
                }
            }
            self.photoDone(id: id, result: result)
        }
    }

    func photoDone(id: CaptureID, result: Result<String, CaptureError>) {
        photosInFlight -= 1
        let now = clock.now()
        switch result {
        case .success(let path):
            counters.photos += 1
            lastFiles = [path]
            log.notice("photo saved: \(path)")
            apply(machine.handle(.photoSaved(id: id, path: path), at: now))
            resolveWaiters(id: id, .success([path]))
            if isReady { publishStatus(readyStatusLine()) }
        case .failure(let e):
            lastError = e.message
            counters.errors += 1
            log.warning("photo failed: \(e.message)")
            apply(machine.handle(.photoFailed(id: id, e), at: now))
            resolveWaiters(id: id, .failure(ServiceFailure(message: e.message)))
        }
    }

    // MARK: Clips

    /// A press: start encoding from the frame exposed at the press, under a
    /// temporary name; a hold commits it, a tap discards it.
    private func startClip(from: MonotonicTime) {
        if let c = clip, c.id != nil { return }  // a recording is running
        dropUncommittedClip()
        clipSerial += 1
        let files = ClipFiles(storage: storage, serial: clipSerial)
        let kept = ring.frames(from: from)
        let start = kept.first.map { min($0.timestamp, from) } ?? from
        var c = ActiveClip(recorder: nil, files: files, start: start, id: nil, stopAt: nil, setupError: nil)
        do {
            var settings = recordingSettings
            if !micRunning { settings.audioChannels = 0 }  // no microphone: video only, no empty track
            let r = try Recorder(settings: settings, start: start, nextPath: { try files.nextPath() })
            for f in kept { r.append(f) }
            c.recorder = r
        } catch {
            c.setupError = "\(error)"
            log.error("cannot record: \(error)")
        }
        clip = c
    }

    private func commitClip(id: CaptureID, from: MonotonicTime) {
        if clip == nil { startClip(from: from) }
        guard var c = clip else { return }
        if let e = c.setupError {
            clip = nil
            apply(machine.handle(.recordingFailed(id: id, CaptureError(.encoder, e)), at: clock.now()))
            resolveWaiters(id: id, .failure(ServiceFailure(message: e)))
            return
        }
        c.id = id
        clip = c
        clipStarts[id] = c.start
        let files = c.files
        let now = clock.now()
        watchdog.encoderStarted(at: now)
        do {
            _ = try storage.ensureSpace(for: .video)
            let path = try files.commit()
            log.notice("recording \(path.isEmpty ? "(naming at the first frame)" : path) from the press")
            apply(machine.handle(.recordingStarted(id: id), at: now))
        } catch {
            let e = (error as? StorageError).map { CaptureError($0) }
                ?? CaptureError(.storageError, "\(error)")
            log.warning("recording refused: \(e.message)")
            clip?.stopAt = now
            Task { await self.abortClip(id: id, error: e) }
        }
    }

    /// Once frames past the stop time have arrived (or a moment passed), finalise.
    func flushStoppedClip(_ now: MonotonicTime) {
        guard let c = clip, let stop = c.stopAt, let id = c.id else { return }
        if now >= stop + .milliseconds(250) {
            Task { await self.finishClip(id: id) }
        }
    }

    func finishClip(id: CaptureID) async {
        guard let c = clip, c.id == id else { return }
        clip = nil
        watchdog.encoderStopped()
        guard let r = c.recorder else { return }
        let summary = await Blocking.run(on: clipQueue) {
            let s = r.finish()
            releaseFreedMemory()
            return s
        }
        let paths = c.files.finalNames(summary.paths).filter { FileManager.default.fileExists(atPath: $0) }
        let now = clock.now()
        if let e = summary.error {
            counters.errors += 1
            lastError = e.message
            if !paths.isEmpty { counters.clips += 1; lastFiles = paths }
            let code: CaptureError.Code = e.isNoSpace ? .storageFull : .encoder
            apply(machine.handle(.recordingFailed(id: id, CaptureError(code, "\(e.message) (kept: \(paths.joined(separator: ", ")))")), at: now))
            resolveWaiters(id: id, paths.isEmpty ? .failure(ServiceFailure(message: e.message)) : .success(paths))
        } else {
            counters.clips += 1
            lastFiles = paths
            log.notice("clip saved: \(paths.joined(separator: ", ")) (\(summary.framesWritten) frames, \(summary.duration.milliseconds) ms)")
            apply(machine.handle(.recordingFinalised(id: id, paths: paths), at: now))
            resolveWaiters(id: id, .success(paths))
        }
        if isReady { publishStatus(readyStatusLine()) }
    }

    private func abortClip(id: CaptureID, error: CaptureError) async {
        guard let c = clip, c.id == id else { return }
        clip = nil
        watchdog.encoderStopped()
        if let r = c.recorder { _ = await Blocking.run(on: clipQueue) { r.finish() } }
        c.files.discard()
        apply(machine.handle(.recordingFailed(id: id, error), at: clock.now()))
        resolveWaiters(id: id, .failure(ServiceFailure(message: error.message)))
    }

    /// The press was not a hold: stop encoding and delete the temporary file,
    /// off the actor (finalising waits for the encoder thread).
    func dropUncommittedClip() {
        guard let c = clip, c.id == nil else { return }
        clip = nil
        clipQueue.async {
            _ = c.recorder?.finish()
            c.files.discard()
            releaseFreedMemory()
        }
    }
}
