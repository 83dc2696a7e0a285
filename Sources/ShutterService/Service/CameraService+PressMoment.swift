import ShutterCore

/// The `press` moment (README "The moment of the press"): a press pins its
/// frame from the frames kept around it; the tap writes that frame's JPEG.
extension CameraService {
    /// The frame period: the longest a chosen frame may start after the press.
    var framePeriod: Duration { .nanoseconds(1_000_000_000 / Int64(max(config.video.fps, 1))) }

    /// How long a pin waits for frames around its press before it fails (a stalled camera).
    static let pinTimeout = Duration.seconds(2)

    func pinPressFrame(origin: CaptureOrigin, at press: MonotonicTime) {
        pins[origin] = PinEntry(pin: PressPin(press: press, pinnedAt: clock.now()))
        choosePinnedFrames()
    }

    /// Chooses the frame of every pin whose frames have arrived, and starts encoding it.
    func choosePinnedFrames() {
        guard pins.values.contains(where: { !$0.chosen }) else { return }
        let frames = ring.all
        for (origin, entry) in pins where !entry.chosen {
            let frame: Frame
            switch PressFrameChoice.choose(press: entry.pin.press, exposureStarts: frames.map(\.exposureStart),
                                           period: framePeriod) {
            case .waitForNext: continue
            case .frame(let i): frame = frames[i]
            case .none:
                // The press is older than every kept frame (a late press on a loaded
                // machine): the oldest one is the closest there is; the report says how far.
                guard let oldest = frames.first else { continue }
                log.warning("the frame of the press was no longer kept: the photo is the oldest kept frame")
                frame = oldest
            }
            // Once chosen, a pin already taken (its photo is waiting) needs no keeping.
            if entry.taken { pins[origin] = nil } else { pins[origin]?.chosen = true }
            // The still stream's frame of the same sensor frame where the camera grants one.
            let photo = frame.companion ?? frame
            let photos = self.photos, info = camera?.info, pin = entry.pin
            spawn { pin.photo.set(await photos.encode(photo, camera: info)) }
        }
    }

    /// Pins still without a frame long after their press fail; pins whose press
    /// is no longer pending and became no photo lose their frame (a hold, a
    /// double tap, a refusal).
    func tidyPins(now: MonotonicTime) {
        for (origin, entry) in pins {
            if !entry.chosen, now - entry.pin.pinnedAt >= Self.pinTimeout {
                pins[origin] = nil
                entry.pin.photo.set(.failure(CaptureError(.camera, "no camera frame arrived around the press")))
            } else if !entry.taken, !machine.isPending(origin) {
                pins[origin] = nil
            }
        }
    }

    /// Stopping: nobody waits for a frame that will not come.
    func failUnchosenPins() {
        for (origin, entry) in pins where !entry.chosen {
            pins[origin] = nil
            entry.pin.photo.set(.failure(CaptureError(.camera, "shutterd is stopping")))
        }
    }

    /// A photo of the pinned frame: written durably (it was encoded at the press).
    func writePinnedPhoto(id: CaptureID, origin: CaptureOrigin, pressedAt: MonotonicTime) {
        // A pin still waiting for its frame stays until chosen; the photo waits for it.
        let entry = pins[origin]
        if entry?.chosen ?? true { pins[origin] = nil } else { pins[origin]?.taken = true }
        let releasedAt = releaseTime(of: origin, pressedAt: pressedAt)
        let photos = self.photos, discarded = lastDiscard
        spawn {
            let result: Result<SavedPhoto, CaptureError>
            switch await entry?.pin.photo.value {
            case .success(let encoded)?: result = await photos.write(encoded)
            case .failure(let e)?: result = .failure(e)
            case nil: result = .failure(CaptureError(.camera, "no frame was pinned for the press"))
            }
            await discarded?.value
            await self.photoDone(id: id, result: result, moment: "press", pressedAt: pressedAt, releasedAt: releasedAt)
        }
    }

    /// When the press was released: a tap's end as the recognizer saw it, or a
    /// request's arrival (a `tap`/`photo` request is press and release at once).
    func releaseTime(of origin: CaptureOrigin, pressedAt: MonotonicTime) -> MonotonicTime {
        if case .button(let p) = origin, let end = tapEnds.removeValue(forKey: p) { return end }
        if case .button = origin { return clock.now() }
        return pressedAt
    }

    /// A tap's release, remembered until its photo is taken (a few only).
    func noteTap(start: MonotonicTime, end: MonotonicTime) {
        tapEnds[start] = end
        if tapEnds.count > 16, let oldest = tapEnds.keys.min() { tapEnds[oldest] = nil }
    }

    /// The longest gap between consecutive video frames since the last photo began.
    func noteVideoFrame(_ f: Frame) {
        if let last = lastVideoFrameAt, f.timestamp > last { videoGap = max(videoGap, f.timestamp - last) }
        lastVideoFrameAt = f.timestamp
    }
}

/// A pin, whether its frame has been chosen (and is being encoded), and
/// whether its photo was asked for (it stays until chosen, pending or not).
struct PinEntry {
    let pin: PressPin
    var chosen = false
    var taken = false
}
