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
///    (`frameArrived`) and encoded to memory at once (a job: `.pressEncoded`), so that
/// 2. the tap (`take`, `.press`) only writes it: temp, fsync, rename (a job).
/// 3. `focused` moment (or a flash photo): the press started an AF cycle
///    (`startAutofocus`, a job: `.autofocused`); the tap waits for it and for the
///    flash to be lit (the LEDs' channel answers `.flashLit`), takes a full-resolution
///    still (a job: `.stillCaptured`), puts the flash out, then encodes and writes it.
/// 4. During a recording a photo is the pinned frame, or the next video frame (`snapshot`).
/// 5. Either way the press's speculative clip is gone from the card before the
///    photo is reported (its discard comes back as `.clipDiscarded`), then `saved` reports it.
///
/// The loop owns this type. Every slow step is a job whose result comes back to the
/// loop as an event; no job waits for another.
final class PhotoPath {
    /// A photo written, or why not, with what its report needs.
    struct Outcome: Sendable {
        var id: CaptureID
        var result: Result<SavedPhoto, CaptureError>
        var moment: String
        var pressedAt: MonotonicTime
        var releasedAt: MonotonicTime
        /// The speculative clip discard this photo is reported after (`clipDiscarded`).
        var afterDiscard: Int?
    }

    /// How long a pin waits for frames around its press before it fails (a stalled camera).
    static let pinTimeout = Duration.seconds(2)
    /// How long it waits for a frame exposed after the press that may be closer; then
    /// the last one exposed before the press is the photo (`PressFrameChoice` `waitedLong`).
    static let laterFrameWait = Duration.seconds(1)

    private let ctx: ServiceContext
    private let jobs: Jobs
    private let leds: LEDs
    let taker: PhotoTaker
    /// The `press` moment's pinned frames, by the press or request they belong to.
    private var pins: [CaptureOrigin: PinEntry] = [:]
    private var pinSerial = 0
    /// Taps' release times by press, until their photo is taken.
    private var tapEnds: [MonotonicTime: MonotonicTime] = [:]
    /// The AF cycle the last press started (`focused`): its number while it runs.
    private var autofocusRunning: Int?
    private var autofocusSerial = 0
    /// `focused` photos asked for and not yet taken: waiting for the AF cycle, the flash, the still.
    private var focused: [CaptureID: FocusedTake] = [:]
    /// Photos during a recording waiting for the next video frame (the `focused` moment).
    private var snapshots: [(id: CaptureID, at: MonotonicTime, releasedAt: MonotonicTime)] = []
    /// Speculative clips being deleted (a tap's), and the newest: a photo taken meanwhile reports once it is gone.
    private var discarding: Set<Int> = []
    private var lastDiscard: Int?
    /// Photos back before their press's clip was gone: reported by `clipDiscarded`.
    private var held: [Outcome] = []
    private(set) var photos = 0
    /// The last photo's moment and timing, and the longest gap between video frames since it began.
    private var lastPhoto: PhotoReport?
    private var videoGap = Duration.zero
    private var lastVideoFrameAt: MonotonicTime?

    init(ctx: ServiceContext, jobs: Jobs, leds: LEDs) {
        self.ctx = ctx
        self.jobs = jobs
        self.leds = leds
        taker = PhotoTaker(config: ctx.config, storage: ctx.storage, clock: ctx.clock, wallClock: ctx.wallClock,
                           cameraAppliesTransform: ctx.roles.cameraAppliesTransform, overlay: ctx.overlay)
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
        autofocusSerial += 1
        let serial = autofocusSerial
        autofocusRunning = serial
        let timeout = Duration.milliseconds(ctx.config.camera.afTimeoutMs)
        jobs.add { .autofocused(serial, await camera.autofocus(timeout: timeout)) }
    }

    /// The press's AF cycle ended (its result is the camera's: the still is taken either way).
    func autofocused(_ serial: Int) {
        if autofocusRunning == serial { autofocusRunning = nil }
        for (id, take) in focused where take.autofocus == serial {
            focused[id]?.autofocus = nil
            advance(id)
        }
    }

    /// `press`: pins the frame exposed at `press` for `origin`.
    func pin(_ origin: CaptureOrigin, at press: MonotonicTime, frames: [Frame], camera: CameraInfo?) {
        pinSerial += 1
        pins[origin] = PinEntry(press: press, pinnedAt: ctx.now, serial: pinSerial)
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
            switch PressFrameChoice.choose(press: entry.press, exposureStarts: frames.map(\.exposureStart),
                                           period: framePeriod,
                                           waitedLong: now - entry.pinnedAt >= Self.laterFrameWait) {
            case .waitForNext: continue
            case .frame(let i): frame = frames[i]
            case .none:
                // The press is older than every kept frame (a late press on a loaded
                // machine): the oldest one is the closest there is; the report says how far.
                guard let oldest = frames.first else { continue }
                ctx.log.warning("the frame of the press was no longer kept: the photo is the oldest kept frame")
                frame = oldest
            }
            pins[origin]?.chosen = true
            // The still stream's frame of the same sensor frame where the camera grants one.
            let photo = frame.companion ?? frame
            let taker = self.taker, serial = entry.serial
            jobs.run(on: taker.queue) { .pressEncoded(origin, serial: serial, taker.encode(photo, camera: camera)) }
        }
    }

    /// A pinned frame's JPEG is in memory (or could not be made): written now if its tap came.
    func encoded(_ origin: CaptureOrigin, serial: Int, _ result: Result<EncodedPhoto, CaptureError>) {
        guard pins[origin]?.serial == serial else { return }  // its press became no photo
        pins[origin]?.encoded = result
        if pins[origin]?.taken != nil { write(origin) }
    }

    /// Pins still without a frame long after their press fail; pins whose press
    /// is no longer pending and became no photo lose their frame (a hold, a
    /// double tap, a refusal).
    /// `patience`: how long a pin waits for its frame (`pinTimeout`, or longer when the
    /// camera's frames are further apart: a long exposure).
    func tidy(now: MonotonicTime, patience: Duration, isPending: (CaptureOrigin) -> Bool) {
        for (origin, entry) in pins {
            if !entry.chosen, now - entry.pinnedAt >= patience {
                fail(origin, CaptureError(.camera, "no camera frame arrived around the press"))
            } else if entry.taken == nil, !isPending(origin) {
                pins[origin] = nil
            }
        }
    }

    /// Stopping: nobody waits for a frame that will not come.
    func failUnchosenPins() {
        for (origin, entry) in pins where !entry.chosen {
            fail(origin, CaptureError(.camera, "shutterd is stopping"))
        }
    }

    /// A pin that will have no frame: its photo, if asked for, fails.
    private func fail(_ origin: CaptureOrigin, _ error: CaptureError) {
        pins[origin]?.encoded = .failure(error)
        if pins[origin]?.taken != nil { write(origin) } else { pins[origin] = nil }
    }

    /// The press's speculative clip is being deleted (`ClipSession.discard`, number `n`).
    func clipDiscarding(_ n: Int) {
        discarding.insert(n)
        lastDiscard = n
    }

    /// A speculative clip is gone from the card: the photos that waited for it, to report.
    func clipDiscarded(_ n: Int) -> [Outcome] {
        discarding.remove(n)
        let ready = held.filter { o in o.afterDiscard.map { !discarding.contains($0) } ?? true }
        held.removeAll { o in o.afterDiscard.map { !discarding.contains($0) } ?? true }
        return ready
    }

    /// A photo job came back: reported now, or once its press's clip is gone.
    func back(_ o: Outcome) -> [Outcome] {
        if let d = o.afterDiscard, discarding.contains(d) {
            held.append(o)
            return []
        }
        return [o]
    }

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
            let lit = !flash || leds.flash == nil
            focused[id] = FocusedTake(pressedAt: pressedAt, releasedAt: releasedAt, flash: flash && !lit,
                                      camera: camera, autofocus: autofocusRunning, lit: lit, afterDiscard: lastDiscard)
            autofocusRunning = nil
            if !lit { leds.show(.still, then: .flashLit(id)) }
            advance(id)
        }
    }

    /// The flash is lit for photo `id`'s still.
    func flashLit(_ id: CaptureID) {
        focused[id]?.lit = true
        advance(id)
    }

    /// A `focused` photo whose AF cycle ended and whose flash is lit: the still, as a job.
    private func advance(_ id: CaptureID) {
        guard let take = focused[id], take.autofocus == nil, take.lit, !take.capturing else { return }
        focused[id]?.capturing = true
        guard let camera = take.camera else {
            return stillCaptured(id, .failure(CaptureError(.camera, "no camera: the photo was not taken")))
        }
        jobs.add {
            do {
                return .stillCaptured(id, .success(try await camera.captureStill()))
            } catch {
                return .stillCaptured(id, .failure(CaptureError(.camera, "still capture failed: \(error)")))
            }
        }
    }

    /// The still is in hand (or not): the flash goes out, the still is encoded and written.
    func stillCaptured(_ id: CaptureID, _ result: Result<Frame, CaptureError>) {
        guard let take = focused.removeValue(forKey: id) else { return }
        if take.flash { leds.show(FlashIndication.off) }
        let taker = self.taker, camera = take.camera?.info
        var outcome = Outcome(id: id, result: .failure(CaptureError(.camera, "no still")), moment: "focused",
                              pressedAt: take.pressedAt, releasedAt: take.releasedAt, afterDiscard: take.afterDiscard)
        if case .failure(let e) = result { outcome.result = .failure(e) }
        jobs.run(on: taker.queue) { [outcome] in
            var o = outcome
            if case .success(let frame) = result { o.result = taker.save(frame, camera: camera) }
            return .photo(o)
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

    /// Writes the pinned frame's JPEG durably (it was encoded at the press), now or once
    /// it is encoded (`encoded`).
    private func writePinned(id: CaptureID, origin: CaptureOrigin, pressedAt: MonotonicTime, releasedAt: MonotonicTime) {
        let outcome = Outcome(id: id, result: .failure(CaptureError(.camera, "no frame was pinned for the press")),
                              moment: "press", pressedAt: pressedAt, releasedAt: releasedAt, afterDiscard: lastDiscard)
        guard pins[origin] != nil else { return jobs.add { .photo(outcome) } }
        pins[origin]?.taken = outcome
        if pins[origin]?.encoded != nil { write(origin) }
    }

    /// The pin's photo, asked for and encoded (or failed): written as a job.
    private func write(_ origin: CaptureOrigin) {
        guard let entry = pins.removeValue(forKey: origin), let outcome = entry.taken, let encoded = entry.encoded else { return }
        let taker = self.taker
        jobs.run(on: taker.queue) {
            var o = outcome
            switch encoded {
            case .success(let photo): o.result = taker.write(photo)
            case .failure(let e): o.result = .failure(e)
            }
            return .photo(o)
        }
    }

    private func save(_ frame: Frame, id: CaptureID, pressedAt: MonotonicTime, releasedAt: MonotonicTime,
                      camera: CameraInfo?) {
        let taker = self.taker
        jobs.run(on: taker.queue) {
            let result = taker.save(frame, camera: camera)
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

    /// A photo is reported: the machine's input for it, and its report when saved.
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

/// The `press` moment's photo for one press or photo request: its chosen frame's JPEG,
/// encoded off the loop as soon as the frame is chosen, and the tap's photo once asked
/// for. Only the chosen frame is held (until encoded); a press that becomes anything
/// else drops the pin and the JPEG with it.
struct PinEntry {
    let press: MonotonicTime
    /// When the loop pinned it (the press became known): bounds the wait for a frame.
    let pinnedAt: MonotonicTime
    /// Tells an encode's result for this pin from one for an earlier pin of the same origin.
    let serial: Int
    var chosen = false
    var encoded: Result<EncodedPhoto, CaptureError>?
    /// The photo asked for (the tap came): written once encoded.
    var taken: PhotoPath.Outcome?
}

/// A `focused` photo on its way: it waits for the press's AF cycle (`autofocus`, its
/// number while it runs) and the flash (`lit`), then the still is captured.
struct FocusedTake {
    let pressedAt: MonotonicTime
    let releasedAt: MonotonicTime
    /// The flash was lit for it (and goes out once the still is in hand).
    let flash: Bool
    let camera: (any CameraDevice)?
    var autofocus: Int?
    var lit: Bool
    let afterDiscard: Int?
    var capturing = false
}
