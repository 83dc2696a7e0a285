// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterMedia
import ShutterStorage

/// The tap path, for both moments (docs/control-and-api.md "The moment of the press"), top to bottom:
///
/// 1. `press` moment: the press pins its frame (`pin`): as soon as the frames
///    around the press have arrived the one exposed at the press is chosen
///    (`frameArrived`) and encoded to memory at once (a job), so that
/// 2. the tap (`take`, `.press`) only writes it: temp, fsync, rename (a job).
/// 3. `focused` moment (or a flash photo): the press started an AF cycle
///    (`startAutofocus`); the tap waits for it (bounded), fires the flash,
///    takes a full-resolution still, encodes and writes it (one job).
/// 4. During a recording a photo is the pinned frame, or the next video frame (`snapshot`).
/// 5. Either way the press's speculative clip is gone from the card before the
///    photo is reported (the discard wait), and `saved` reports it.
///
/// The loop owns this type; every slow step is a job that comes back as `.done(.photo)`.
final class PhotoPath {
    /// A photo written, or why not, with what its report needs.
    struct Outcome: Sendable {
        var id: CaptureID
        var result: Result<SavedPhoto, CaptureError>
        var moment: String
        var pressedAt: MonotonicTime
        var releasedAt: MonotonicTime
    }

    /// How long a pin waits for frames around its press before it fails (a stalled camera).
    static let pinTimeout = Duration.seconds(2)
    /// How long it waits for a frame exposed after the press that may be closer; then
    /// the last one exposed before the press is the photo (`PressFrameChoice` `waitedLong`).
    static let laterFrameWait = Duration.seconds(1)

    private let ctx: ServiceContext
    private let jobs: Jobs
    let taker: PhotoTaker
    /// The `press` moment's pinned frames, by the press or request they belong to.
    private var pins: [CaptureOrigin: PinEntry] = [:]
    /// Taps' release times by press, until their photo is taken.
    private var tapEnds: [MonotonicTime: MonotonicTime] = [:]
    /// The AF cycle the last press started (`focused`), for its tap.
    private var autofocus: Eventually<AutofocusResult>?
    /// Photos during a recording waiting for the next video frame (the `focused` moment).
    private var snapshots: [(id: CaptureID, at: MonotonicTime, releasedAt: MonotonicTime)] = []
    /// The last speculative clip thrown away (a tap's): its photo is reported once it is gone.
    private var lastDiscard: Eventually<Void>?
    private(set) var photos = 0
    /// The last photo's moment and timing, and the longest gap between video frames since it began.
    private var lastPhoto: PhotoReport?
    private var videoGap = Duration.zero
    private var lastVideoFrameAt: MonotonicTime?

    init(ctx: ServiceContext, jobs: Jobs, flashLED: LEDDriver?) {
        self.ctx = ctx
        self.jobs = jobs
        taker = PhotoTaker(config: ctx.config, storage: ctx.storage, clock: ctx.clock, wallClock: ctx.wallClock,
                           flashLED: flashLED, cameraAppliesTransform: ctx.roles.cameraAppliesTransform)
    }

    /// No photo waits for a frame (the photos being taken or saved are the machine's `inProgress`).
    var isIdle: Bool { snapshots.isEmpty }

    var report: PhotoReport? {
        lastPhoto.map { p in
            var p = p
            p.videoGapMs = videoGap.exactMilliseconds
            return p
        }
    }

    /// The frame period: the longest a chosen frame may start after the press.
    private var framePeriod: Duration { .nanoseconds(1_000_000_000 / Int64(max(ctx.config.video.fps, 1))) }

    // MARK: The press

    /// `focused`: the press starts an AF cycle; its tap waits for the result.
    func startAutofocus(camera: (any CameraDevice)?) {
        guard let camera else { return }
        let af = Eventually<AutofocusResult>()
        autofocus = af
        let timeout = Duration.milliseconds(ctx.config.camera.afTimeoutMs)
        jobs.add {
            af.set(await camera.autofocus(timeout: timeout))
            return .nothing
        }
    }

    /// `press`: pins the frame exposed at `press` for `origin`.
    func pin(_ origin: CaptureOrigin, at press: MonotonicTime, frames: [Frame], camera: CameraInfo?) {
        pins[origin] = PinEntry(pin: PressPin(press: press, pinnedAt: ctx.now))
        choosePinnedFrames(frames, camera: camera)
    }

    /// A tap's release, remembered until its photo is taken (a few only).
    func noteTap(start: MonotonicTime, end: MonotonicTime) {
        tapEnds[start] = end
        if tapEnds.count > 16, let oldest = tapEnds.keys.min() { tapEnds[oldest] = nil }
    }

    /// A new video frame: pins choose, snapshots take it, the gap figure grows.
    func frameArrived(_ f: Frame, frames: [Frame], camera: CameraInfo?) {
        if let last = lastVideoFrameAt, f.timestamp > last { videoGap = max(videoGap, f.timestamp - last) }
        lastVideoFrameAt = f.timestamp
        if !pins.isEmpty { choosePinnedFrames(frames, camera: camera) }
        if !snapshots.isEmpty {
            let waiting = snapshots
            snapshots.removeAll()
            for w in waiting { save(f, id: w.id, pressedAt: w.at, releasedAt: w.releasedAt, camera: camera) }
        }
    }

    /// Chooses the frame of every pin whose frames have arrived, and starts encoding it.
    private func choosePinnedFrames(_ frames: [Frame], camera: CameraInfo?) {
        let now = ctx.now
        for (origin, entry) in pins where !entry.chosen {
            let frame: Frame
            switch PressFrameChoice.choose(press: entry.pin.press, exposureStarts: frames.map(\.exposureStart),
                                           period: framePeriod,
                                           waitedLong: now - entry.pin.pinnedAt >= Self.laterFrameWait) {
            case .waitForNext: continue
            case .frame(let i): frame = frames[i]
            case .none:
                // The press is older than every kept frame (a late press on a loaded
                // machine): the oldest one is the closest there is; the report says how far.
                guard let oldest = frames.first else { continue }
                ctx.log.warning("the frame of the press was no longer kept: the photo is the oldest kept frame")
                frame = oldest
            }
            // Once chosen, a pin already taken (its photo is waiting) needs no keeping.
            if entry.taken { pins[origin] = nil } else { pins[origin]?.chosen = true }
            // The still stream's frame of the same sensor frame where the camera grants one.
            let photo = frame.companion ?? frame
            let taker = self.taker, pin = entry.pin
            jobs.add {
                pin.photo.set(await taker.encode(photo, camera: camera))
                return .nothing
            }
        }
    }

    /// Pins still without a frame long after their press fail; pins whose press
    /// is no longer pending and became no photo lose their frame (a hold, a
    /// double tap, a refusal).
    /// `patience`: how long a pin waits for its frame (`pinTimeout`, or longer when the
    /// camera's frames are further apart: a long exposure).
    func tidy(now: MonotonicTime, patience: Duration, isPending: (CaptureOrigin) -> Bool) {
        for (origin, entry) in pins {
            if !entry.chosen, now - entry.pin.pinnedAt >= patience {
                pins[origin] = nil
                entry.pin.photo.set(.failure(CaptureError(.camera, "no camera frame arrived around the press")))
            } else if !entry.taken, !isPending(origin) {
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

    /// The press's speculative clip is being deleted: the next photo reports once it is gone.
    func clipDiscarded(_ gone: Eventually<Void>) { lastDiscard = gone }

    // MARK: The tap

    /// The machine's `takePhoto`: the pinned frame written (`press`), or a focused still taken.
    func take(id: CaptureID, origin: CaptureOrigin, pressedAt: MonotonicTime, flash: Bool, moment: StillMoment,
              camera: (any CameraDevice)?) {
        videoGap = .zero
        let releasedAt = releaseTime(of: origin, pressedAt: pressedAt)
        switch moment {
        case .press:
            writePinned(id: id, origin: origin, pressedAt: pressedAt, releasedAt: releasedAt)
        case .focused:
            pins[origin] = nil  // a flash photo of the press moment: taken focused
            let af = autofocus, taker = self.taker, discarded = lastDiscard
            autofocus = nil
            jobs.add {
                let result = await taker.take(camera: camera, autofocus: af, flash: flash)
                await discarded?.value
                return .photo(Outcome(id: id, result: result, moment: "focused", pressedAt: pressedAt,
                                      releasedAt: releasedAt))
            }
        }
    }

    /// A photo during a recording: the pinned frame, else the next video frame.
    func snapshot(id: CaptureID, origin: CaptureOrigin, at: MonotonicTime) {
        videoGap = .zero
        let releasedAt = releaseTime(of: origin, pressedAt: at)
        if pins[origin] != nil {
            writePinned(id: id, origin: origin, pressedAt: at, releasedAt: releasedAt)
        } else {
            snapshots.append((id, at, releasedAt))
        }
    }

    /// Writes the pinned frame's JPEG durably (it was encoded at the press); a
    /// pin still waiting for its frame stays until chosen and the job waits for it.
    private func writePinned(id: CaptureID, origin: CaptureOrigin, pressedAt: MonotonicTime, releasedAt: MonotonicTime) {
        let entry = pins[origin]
        if entry?.chosen ?? true { pins[origin] = nil } else { pins[origin]?.taken = true }
        let taker = self.taker, discarded = lastDiscard
        jobs.add {
            let result: Result<SavedPhoto, CaptureError>
            switch await entry?.pin.photo.value {
            case .success(let encoded)?: result = await taker.write(encoded)
            case .failure(let e)?: result = .failure(e)
            case nil: result = .failure(CaptureError(.camera, "no frame was pinned for the press"))
            }
            await discarded?.value
            return .photo(Outcome(id: id, result: result, moment: "press", pressedAt: pressedAt, releasedAt: releasedAt))
        }
    }

    private func save(_ frame: Frame, id: CaptureID, pressedAt: MonotonicTime, releasedAt: MonotonicTime,
                      camera: CameraInfo?) {
        let taker = self.taker
        jobs.add {
            let result = await taker.save(frame, camera: camera)
            return .photo(Outcome(id: id, result: result, moment: "video", pressedAt: pressedAt, releasedAt: releasedAt))
        }
    }

    /// When the press was released: a tap's end as the recognizer saw it, or a
    /// request's arrival (a `tap`/`photo` request is press and release at once).
    private func releaseTime(of origin: CaptureOrigin, pressedAt: MonotonicTime) -> MonotonicTime {
        if case .button(let p) = origin, let end = tapEnds.removeValue(forKey: p) { return end }
        if case .button = origin { return ctx.now }
        return pressedAt
    }

    // MARK: The report

    /// A photo job came back: the machine's input for it, and its report when saved.
    func saved(_ o: Outcome) -> (input: CaptureInput, report: PhotoReport?) {
        switch o.result {
        case .success(let photo):
            let r = PhotoReport(path: photo.path, moment: o.moment,
                                pressToExposureMs: (photo.exposureStart - o.pressedAt).exactMilliseconds,
                                releaseToDurableMs: max(.zero, photo.durableAt - o.releasedAt).exactMilliseconds,
                                width: photo.size.width, height: photo.size.height)
            lastPhoto = r
            photos += 1
            ctx.log.notice("photo saved: \(photo.path) (\(r.width)x\(r.height), moment \(o.moment), press to exposure "
                           + "\(Self.ms(r.pressToExposureMs)) ms, release to durable \(Self.ms(r.releaseToDurableMs)) ms)")
            return (.photoSaved(id: o.id, path: photo.path), r)
        case .failure(let e):
            ctx.log.warning("photo failed: \(e.message)")
            return (.photoFailed(id: o.id, e), nil)
        }
    }

    /// A figure for the log: one decimal.
    static func ms(_ v: Double) -> String { String(Double((v * 10).rounded()) / 10) }
}

/// The `press` moment's photo for one press or photo request: the chosen frame's
/// JPEG, encoded off the loop as soon as the frame is chosen. Only the chosen
/// frame is held (until encoded); a press that becomes anything else drops the
/// pin and the JPEG with it.
final class PressPin: Sendable {
    let press: MonotonicTime
    /// When the loop pinned it (the press became known): bounds the wait for a frame.
    let pinnedAt: MonotonicTime
    /// The encoded photo, or why there is none; set once.
    let photo = Eventually<Result<EncodedPhoto, CaptureError>>()

    init(press: MonotonicTime, pinnedAt: MonotonicTime) {
        self.press = press
        self.pinnedAt = pinnedAt
    }
}

/// A pin, whether its frame has been chosen (and is being encoded), and
/// whether its photo was asked for (it stays until chosen, pending or not).
struct PinEntry {
    let pin: PressPin
    var chosen = false
    var taken = false
}
