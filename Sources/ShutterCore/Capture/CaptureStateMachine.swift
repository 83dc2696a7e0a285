// SPDX-License-Identifier: BSD-2-Clause
/// The capture state machine: a value-type reducer from inputs (gestures, role
/// outcomes, faults, commands, time) to actions. It owns no thread and no
/// clock: every input carries its time, so it is tested step by step.
///
/// Decisions (docs/control-and-api.md "The button", "The moment of the press"):
/// - A press keeps frames from the press and, by `stillMoment`, pins the frame
///   exposed at the press (`press`) or starts autofocus (`focused`); a tap takes
///   that frame, or a full-resolution still (also whenever the flash fires); a
///   hold records a clip that starts at the press.
/// - Busy (a still saving, a clip finalising): one press is queued and runs when
///   the machine is idle again, as whatever gesture it became meanwhile (tap →
///   still, hold → clip from its press, using the kept frames); any further
///   press is refused with the busy LED signal. No press is lost silently.
/// - A photo asked for during a recording (a control-socket `photo`, or a tap
///   while a command-started recording runs) is a still taken from the video
///   stream: the clip is never cut for it.
/// - Storage faults and a lost camera latch: presses are refused with the error
///   code until `storageRestored` / `cameraRestored`; a refused press asks for a
///   storage re-check. Camera and encoder errors of one capture are shown and
///   the next press tries again. A recording is stopped (and kept) on any fault.
/// - Every non-idle state has a deadline (`nextDeadline`); a `tick` past it
///   fails the capture (or drops an undecided press), so a role or recognizer
///   that never answers cannot wedge the machine.
/// - Double tap cycles the flash mode off → auto → on: the machine asks for
///   the next mode (`.flashModeChanged`); the mode and `video.torch` are the
///   service's settings, given with every input (`CaptureLights`), not kept here.
/// - Shutdown gesture (quick taps, then a hold through a countdown): the taps'
///   photos and the hold's clip are kept like any others; `shutdown` stops the
///   recording, lets every capture in flight finish, then `powerOff`.
public struct CaptureStateMachine: Sendable {
    public struct Configuration: Equatable, Sendable {
        /// `video.maxSeconds`: a recording is cut at its press + this.
        public var maxRecording: Duration
        /// A still not saved within this fails (camera error) and the machine moves on.
        public var photoTimeout: Duration
        /// A clip not finalised within this fails (encoder error) and the machine moves on.
        public var finaliseTimeout: Duration
        /// A press that became neither tap nor hold this long after it began is
        /// dropped (the recognizer always decides within holdMs + doubleTapMs;
        /// this only guards against a recognizer that stopped talking).
        public var pressTimeout: Duration
        public var flash: FlashPolicy
        /// How often a one-off error code is blinked.
        public var transientErrorRepeats: Int
        /// `still.moment`: `press`, a press pins its frame and starts no autofocus;
        /// `focused`, autofocus at the press and a full-resolution still after the
        /// release. No default: whoever builds the machine says which (the service,
        /// from its configuration).
        public var stillMoment: StillMoment

        public init(maxRecording: Duration = .seconds(60), photoTimeout: Duration = .seconds(20),
                    finaliseTimeout: Duration = .seconds(20), pressTimeout: Duration = .seconds(10),
                    flash: FlashPolicy = FlashPolicy(), transientErrorRepeats: Int = 2,
                    stillMoment: StillMoment) {
            self.stillMoment = stillMoment
            self.maxRecording = maxRecording
            self.photoTimeout = photoTimeout
            self.finaliseTimeout = finaliseTimeout
            self.pressTimeout = pressTimeout
            self.flash = flash
            self.transientErrorRepeats = transientErrorRepeats
        }
    }

    private enum Phase: Equatable {
        case booting
        case idle
        case pressed(at: MonotonicTime)
        case photo(id: CaptureID, pressedAt: MonotonicTime, since: MonotonicTime, moment: StillMoment)
        /// `until`: a remote hold's own end (nil: the release, a stop or the max).
        /// `origin`: who started it (its own press is told by this, never by time).
        case recording(id: CaptureID, from: MonotonicTime, until: MonotonicTime?, origin: CaptureOrigin)
        case finalising(id: CaptureID, since: MonotonicTime)
        case poweredOff
    }

    /// What the queued press turned into while the machine was busy.
    private enum QueuedGesture: Equatable {
        case pending, tap, holding
        case held(end: MonotonicTime)
    }

    /// The one request that waits while the camera is busy: a button press
    /// (its gesture still being decided) or a request, which arrives decided.
    private struct QueuedPress: Equatable {
        var at: MonotonicTime
        var gesture: QueuedGesture
        var origin: CaptureOrigin

        /// Whether this is the button's press at `p` (a request queued at the same
        /// instant is not: requests and presses never stand for each other).
        func isPress(_ p: MonotonicTime) -> Bool { origin == .button(press: p) }
    }

    private struct Countdown: Equatable {
        var start: MonotonicTime
        var deadline: MonotonicTime
    }

    public let configuration: Configuration
    private var phase: Phase = .booting
    private var faults: Set<CaptureFault> = []
    private var queued: QueuedPress?
    /// A press made before the camera's first frame (one held at power-on): kept, with what
    /// it became meanwhile, and taken at the first frame (`.ready`).
    private var bootPress: QueuedPress?
    /// The boot press's time, and the first frame's it was taken at: its later gestures
    /// (the release) are dated by the press they name.
    private var bootAlias: (from: MonotonicTime, to: MonotonicTime)?
    /// Presses already dealt with (refused, consumed, dropped): their later
    /// gesture events are ignored. Bounded: only recent presses can still have events.
    private var finishedPresses: [MonotonicTime] = []
    private var countdown: Countdown?
    private var shutdownRequested = false
    private var scene: FrameMetadata?
    private var torchOn = false
    private var lastID: UInt64 = 0
    private var snapshotsInFlight: Set<CaptureID> = []
    private var shownBase: StatusIndication = .booting
    // Per call: the lights it was given (a double tap moves on the mode for the
    // rest of the call), and the output, both set by `handle`.
    private var lights = CaptureLights()
    private var actions: [CaptureAction] = []
    private var oneShots: [CaptureAction] = []

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    // MARK: - Observation

    public var state: CaptureState {
        switch phase {
        case .poweredOff: return .poweredOff
        case .booting: return .booting
        default: break
        }
        if shutdownRequested { return .shuttingDown }
        if let c = countdown { return .shutdownCountdown(deadline: c.deadline) }
        switch phase {
        case .pressed(let at): return .pressed(at: at)
        case .photo(_, let pressedAt, _, _): return .takingPhoto(pressedAt: pressedAt)
        case .recording(_, let from, _, _): return .recording(from: from)
        case .finalising: return .finalising
        default: break
        }
        guard let worst = worstLatchedFault else { return .idle }
        return worst == .cameraLost ? .cameraUnavailable : .storageUnavailable(worst.ledCode)
    }

    /// When to send the next `tick`; nil when no deadline is pending.
    public var nextDeadline: MonotonicTime? {
        switch phase {
        case .pressed(let at): return at + configuration.pressTimeout
        case .photo(_, _, let since, _): return since + configuration.photoTimeout
        case .recording(_, let from, let until, _):
            let max = from + configuration.maxRecording
            return until.map { Swift.min($0, max) } ?? max
        case .finalising(_, let since): return since + configuration.finaliseTimeout
        default: return nil
        }
    }

    /// While recording: since when, and when it stops on its own (a hold's
    /// seconds or `maxRecording`, whichever comes first). Nil otherwise.
    public var recordingSpan: (from: MonotonicTime, end: MonotonicTime)? {
        guard case .recording(_, let from, let until, _) = phase else { return nil }
        let max = from + configuration.maxRecording
        return (from, until.map { Swift.min($0, max) } ?? max)
    }

    /// True while a press would be queued rather than served at once.
    public var hasQueuedPress: Bool { queued != nil }

    /// True while the request or press has not been answered yet: a press not
    /// dealt with yet, or the queued request. Once false, its answer was among
    /// the actions (a capture, `answers`, `refused`), or it made no capture at
    /// all (a double tap, the shutdown gesture's own press, a timeout).
    public func isPending(_ origin: CaptureOrigin) -> Bool {
        if queued?.origin == origin { return true }
        // A button press is pending until the machine has dealt with it (even one
        // it has not seen yet, or one held during a command recording).
        if case .button(let p) = origin { return !isFinished(p) }
        return false
    }

    public var activeFaults: Set<CaptureFault> { faults }

    /// The captures under way, oldest first: the one record of what is in progress
    /// (the service words its "busy: ..." refusals from it).
    public var inProgress: [CaptureInProgress] {
        var all: [CaptureInProgress] = snapshotsInFlight.map { CaptureInProgress(id: $0, activity: .videoSnapshot) }
        switch phase {
        case .photo(let id, _, _, let moment): all.append(CaptureInProgress(id: id, activity: .photo(moment)))
        case .recording(let id, _, _, _): all.append(CaptureInProgress(id: id, activity: .recording))
        case .finalising(let id, _): all.append(CaptureInProgress(id: id, activity: .finalising))
        default: break
        }
        return all.sorted { $0.id.value < $1.id.value }
    }

    /// The camera stopped delivering (a lost stream, a reopen, a failed start) and no frame came since.
    public var cameraLost: Bool { faults.contains(.cameraLost) }

    // MARK: - The reducer

    /// `lights`: the flash mode and torch in force now (the service's settings).
    public mutating func handle(_ input: CaptureInput, at now: MonotonicTime, lights: CaptureLights) -> [CaptureAction] {
        if phase == .poweredOff { return [] }
        self.lights = lights
        actions = []
        oneShots = []
        switch input {
        case .ready:
            if phase == .booting {
                phase = .idle
                takeBootPress(now)
            }
        case .gesture(let g):
            gesture(bootAliased(g), now)
        case .command(let c, let r):
            command(c, .request(r), now)
        case .photoSaved(let id, _):
            if case .photo(id, _, _, _) = phase { phase = .idle }
            snapshotsInFlight.remove(id)
            // A late answer is still a saved file: show it.
            oneShots.append(.led(.photoTaken))
        case .photoFailed(let id, let error):
            actions.append(.failed(error))
            if case .photo(id, _, _, _) = phase { phase = .idle }
            snapshotsInFlight.remove(id)
            apply(error, now)
        case .recordingFinalised(let id, _):
            if isCurrentRecording(id) { endRecordingPhase() }
            oneShots.append(.led(.photoTaken))
        case .recordingFailed(let id, let error):
            actions.append(.failed(error))
            if isCurrentRecording(id) { endRecordingPhase() }
            apply(error, now)
        case .fault(let f):
            addFault(f, now)
        case .cameraRestored:
            faults.remove(.cameraLost)
        case .storageRestored:
            faults.remove(.storageFull)
            faults.remove(.storageError)
        case .sceneMetered(let m):
            scene = m
            return []
        case .flashModeSet(let m):
            actions.append(.flashLED(.mode(m)))
        case .tick:
            tick(now)
        }
        let poweringOff = settle(now)
        var out = actions
        let base = baseIndication
        if base != shownBase {
            shownBase = base
            out.append(.led(base))
        }
        out += oneShots
        if poweringOff { out.append(.powerOff) }
        return out
    }

    // MARK: - Gestures

    private mutating func gesture(_ g: GestureEvent, _ now: MonotonicTime) {
        if phase == .booting, bootGesture(g) { return }
        switch g {
        case .pressed(let p):
            press(p, now)
        case .tap(let s, _):
            tap(s, now)
        case .holdStarted(let p, _):
            holdStarted(p, now)
        case .hold(let s, let e):
            holdEnded(s, e, now)
        case .doubleTap(let s, let e):
            doubleTap(s, e)
        case .shutdownCountdown(let s, let deadline):
            beginCountdown(s, deadline, now)
        case .shutdownCancelled:
            countdown = nil
        case .shutdown:
            requestShutdown(now)
        }
    }

    private mutating func press(_ p: MonotonicTime, _ now: MonotonicTime) {
        if isFinished(p) || phase == .pressed(at: p) || queued?.isPress(p) == true { return }
        if phase == .booting {
            // The first press before the first frame waits for it (a press from power-off).
            if bootPress == nil { bootPress = QueuedPress(at: p, gesture: .pending, origin: .button(press: p)); return }
            if bootPress?.isPress(p) == true { return }
            return refuse(.notReady, press: p)
        }
        if shutdownRequested { return refuse(.shuttingDown, press: p) }
        let origin = CaptureOrigin.button(press: p)
        switch phase {
        case .idle:
            if let f = worstLatchedFault { return refuse(.fault(f.ledCode), press: p) }
            phase = .pressed(at: p)
            actions += pressStarts(origin, at: p) + [.startSpeculativeClip(from: p)]
        case .pressed, .photo, .finalising:
            guard queued == nil else { return refuse(.busy, press: p) }
            queued = QueuedPress(at: p, gesture: .pending, origin: origin)
            pin(origin, at: p)
            // Frames are already kept from the current press's time when pressed.
            if case .pressed = phase {} else { actions.append(.startSpeculativeClip(from: p)) }
        case .recording:
            // Only possible during a command-started recording (a gesture
            // recording holds the button). A tap of this press takes a snapshot
            // (of the press's frame, in the `press` moment).
            pin(origin, at: p)
        case .booting, .poweredOff:
            break
        }
    }

    // MARK: - A press from power-off

    /// What the boot press became before the first frame; true when `g` was about it.
    private mutating func bootGesture(_ g: GestureEvent) -> Bool {
        guard let b = bootPress else { return false }
        switch g {
        case .tap(let s, _) where b.isPress(s):
            bootPress?.gesture = .tap
        case .holdStarted(let p, _) where b.isPress(p):
            bootPress?.gesture = .holding
        case .hold(let s, _) where b.isPress(s):
            // Released before the camera saw any of it: what it can still give is the photo.
            bootPress?.gesture = .tap
        case .doubleTap(let s, let e) where b.at >= s && b.at <= e, .shutdownCountdown(let s, let e) where b.at >= s && b.at <= e:
            // A flash-mode change or the shutdown gesture, not a capture.
            bootPress = nil
            finish(b.at)
            return false
        default:
            return false
        }
        return true
    }

    /// At the first frame: the boot press as pressed now (its frame the first ones, not
    /// frames before the camera ran), then what it became meanwhile.
    private mutating func takeBootPress(_ now: MonotonicTime) {
        guard let b = bootPress else { return }
        bootPress = nil
        finish(b.at)
        bootAlias = (b.at, now)
        press(now, now)
        switch b.gesture {
        case .tap, .held: tap(now, now)
        case .holding: holdStarted(now, now)
        case .pending: break
        }
    }

    /// A gesture of the boot press, dated by the press it was taken as.
    private func bootAliased(_ g: GestureEvent) -> GestureEvent {
        guard let a = bootAlias else { return g }
        func d(_ t: MonotonicTime) -> MonotonicTime { t == a.from ? a.to : t }
        switch g {
        case .pressed(let p): return .pressed(at: d(p))
        case .holdStarted(let p, let t): return .holdStarted(pressedAt: d(p), at: t)
        case .tap(let s, let e): return .tap(start: d(s), end: e)
        case .hold(let s, let e): return .hold(start: d(s), end: e)
        case .doubleTap(let s, let e): return .doubleTap(start: d(s), end: e)
        case .shutdownCountdown(let s, let deadline): return .shutdownCountdown(start: d(s), deadline: deadline)
        case .shutdownCancelled, .shutdown: return g
        }
    }

    private mutating func tap(_ s: MonotonicTime, _ now: MonotonicTime) {
        if case .recording(_, _, _, let origin) = phase, origin != .button(press: s) {
            if !isFinished(s) { finish(s); snapshot(at: s, origin: .button(press: s)) }
            return
        }
        guard track(s, now) else { return }
        if phase == .pressed(at: s) {
            finish(s)
            phase = .idle
            releaseFrames()
            startPhoto(pressedAt: s, origin: .button(press: s), now)
        } else if queued?.isPress(s) == true {
            queued?.gesture = .tap
        }
    }

    private mutating func holdStarted(_ p: MonotonicTime, _ now: MonotonicTime) {
        if case .recording = phase { return }
        guard track(p, now) else { return }
        if phase == .pressed(at: p) {
            finish(p)
            startRecording(from: p, origin: .button(press: p), now)
        } else if queued?.isPress(p) == true {
            queued?.gesture = .holding
        }
    }

    private mutating func holdEnded(_ s: MonotonicTime, _ e: MonotonicTime, _ now: MonotonicTime) {
        if case .recording(let id, _, _, let origin) = phase {
            // Another press held during a command recording captures nothing.
            if origin == .button(press: s) { stopRecording(id, at: e, now) } else { finish(s) }
            return
        }
        guard track(s, now) else { return }
        if phase == .pressed(at: s) {
            // holdStarted was missed: record the whole hold from the kept frames.
            finish(s)
            startRecording(from: s, origin: .button(press: s), now)
            if case .recording(let id, _, _, _) = phase { stopRecording(id, at: e, now) }
        } else if queued?.isPress(s) == true {
            queued?.gesture = .held(end: e)
        }
    }

    private mutating func doubleTap(_ s: MonotonicTime, _ e: MonotonicTime) {
        let next = lights.flashMode.next
        lights.flashMode = next
        actions += [.flashModeChanged(next), .flashLED(.mode(next))]
        var dropped = false
        if case .pressed(let p) = phase, p >= s, p <= e {
            phase = .idle
            finish(p)
            dropped = true
        }
        if let q = queued, case .button(let qp) = q.origin, qp >= s, qp <= e {
            queued = nil
            finish(qp)
            dropped = true
        }
        if dropped { releaseFrames() }
    }

    private mutating func beginCountdown(_ s: MonotonicTime, _ deadline: MonotonicTime, _ now: MonotonicTime) {
        countdown = Countdown(start: now, deadline: deadline)
        // The press being held is the shutdown press: it captures nothing.
        // Completed steps of the sequence (taps, a queued tap) are kept.
        var dropped = dropPendingQueuedPress()
        switch phase {
        case .pressed(let p):
            phase = .idle
            finish(p)
            dropped = true
        case .recording:
            // The shutdown press is a hold (the recognizer says holdStarted first):
            // its clip keeps running through the countdown and is finalised by
            // `shutdown`, or ends with the release like any hold.
            break
        default:
            break
        }
        if dropped { releaseFrames() }
    }

    private mutating func requestShutdown(_ now: MonotonicTime) {
        countdown = nil
        shutdownRequested = true
        var dropped = dropPendingQueuedPress()
        switch phase {
        case .pressed(let p):
            phase = .idle
            finish(p)
            dropped = true
        case .recording(let id, _, _, _):
            stopRecording(id, at: now, now)
        default:
            break
        }
        if dropped { releaseFrames() }
    }

    /// Drops a queued press that is still held (it belongs to the shutdown gesture).
    private mutating func dropPendingQueuedPress() -> Bool {
        guard let q = queued, case .button(let p) = q.origin, q.gesture == .pending || q.gesture == .holding else {
            return false
        }
        queued = nil
        finish(p)
        return true
    }

    /// Makes sure a gesture's press is known (the current or the queued press),
    /// treating a press never reported as if it had just been reported. False
    /// when the press was refused or already dealt with.
    private mutating func track(_ p: MonotonicTime, _ now: MonotonicTime) -> Bool {
        if isFinished(p) { return false }
        if phase == .pressed(at: p) || queued?.isPress(p) == true { return true }
        press(p, now)
        return phase == .pressed(at: p) || queued?.isPress(p) == true
    }

    // MARK: - Commands

    /// The one rule for requests (docs/control-and-api.md "Requests: one rule, one answer"): served at once when the
    /// camera is free; while it is busy one request waits (queued) and any
    /// further one is refused at once. A photo during a recording is a still
    /// from the video stream (no wait); a stop always runs.
    private mutating func command(_ c: CaptureCommand, _ origin: CaptureOrigin, _ now: MonotonicTime) {
        if phase == .booting, c != .recordStop { return refuse(.notReady, origin: origin) }
        if shutdownRequested, c != .recordStop { return refuse(.shuttingDown, origin: origin) }
        switch (c, phase) {
        case (.photo, .recording):
            pin(origin, at: now)
            snapshot(at: now, origin: origin)
        case (.photo, .idle):
            if let f = worstLatchedFault { return refuse(.fault(f.ledCode), origin: origin) }
            actions += pressStarts(origin, at: now)
            startPhoto(pressedAt: now, origin: origin, now)
        case (.recordStart(let after), .idle):
            if let f = worstLatchedFault { return refuse(.fault(f.ledCode), origin: origin) }
            startRecording(from: now, origin: origin, now, until: after.map { now + $0 })
        case (.recordStart, .recording):
            refuse(.alreadyRecording, origin: origin)
        case (.photo, _), (.recordStart, _):
            guard queued == nil else { return refuse(.busy, origin: origin) }
            var gesture = QueuedGesture.tap
            if case .recordStart(let after) = c {
                gesture = after.map { .held(end: now + $0) } ?? .holding
                // Like a queued press: encoding starts now, so the clip starts at the request.
                actions.append(.startSpeculativeClip(from: now))
            } else {
                pin(origin, at: now)  // the photo is of the moment it was asked for
            }
            queued = QueuedPress(at: now, gesture: gesture, origin: origin)
        case (.recordStop, .recording(let id, _, _, _)):
            actions.append(.answers(origin, with: id))
            stopRecording(id, at: now, now)
        case (.recordStop, _):
            refuse(.notRecording, origin: origin)
        }
    }

    // MARK: - Captures

    private mutating func newID() -> CaptureID {
        lastID += 1
        return CaptureID(lastID)
    }

    /// What a press (or a photo request) starts: the autofocus cycle the
    /// `focused` still waits for, or the pinned frame of the `press` moment.
    private func pressStarts(_ origin: CaptureOrigin, at p: MonotonicTime) -> [CaptureAction] {
        configuration.stillMoment == .press ? [.pinPressFrame(origin: origin, at: p)] : [.startAutofocus]
    }

    private mutating func pin(_ origin: CaptureOrigin, at p: MonotonicTime) {
        if configuration.stillMoment == .press { actions.append(.pinPressFrame(origin: origin, at: p)) }
    }

    /// The autofocus cycle a queued press's `focused` still waits for (a
    /// `press`-moment press pinned its frame when it was queued).
    private var queuedPhotoStarts: [CaptureAction] {
        configuration.stillMoment == .press ? [] : [.startAutofocus]
    }

    private mutating func startPhoto(pressedAt: MonotonicTime, origin: CaptureOrigin, _ now: MonotonicTime) {
        let id = newID()
        let flash = configuration.flash.shouldFire(mode: lights.flashMode, scene: scene)
        // A flash cannot light an exposure that already happened: that photo is focused.
        var moment = configuration.stillMoment
        if flash && moment == .press {
            moment = .focused
            actions.append(.startAutofocus)
        }
        actions.append(.takePhoto(id: id, origin: origin, pressedAt: pressedAt, flash: flash, moment: moment))
        phase = .photo(id: id, pressedAt: pressedAt, since: now, moment: moment)
    }

    private mutating func snapshot(at t: MonotonicTime, origin: CaptureOrigin) {
        let id = newID()
        snapshotsInFlight.insert(id)
        actions.append(.takeVideoSnapshot(id: id, origin: origin, at: t))
    }

    private mutating func startRecording(from: MonotonicTime, origin: CaptureOrigin, _ now: MonotonicTime,
                                         until: MonotonicTime? = nil) {
        let id = newID()
        // The torch is `video.torch` alone: the flash mode is for stills.
        let torch = lights.videoTorch
        actions.append(.startRecording(id: id, origin: origin, from: from, torch: torch))
        if torch {
            actions.append(.flashLED(.torch))
            torchOn = true
        }
        phase = .recording(id: id, from: from, until: until, origin: origin)
    }

    private mutating func stopRecording(_ id: CaptureID, at end: MonotonicTime, _ now: MonotonicTime) {
        actions.append(.stopRecording(id: id, at: end))
        torchOff()
        phase = .finalising(id: id, since: now)
    }

    private func isCurrentRecording(_ id: CaptureID) -> Bool {
        switch phase {
        case .recording(id, _, _, _), .finalising(id, _): return true
        default: return false
        }
    }

    private mutating func endRecordingPhase() {
        torchOff()
        phase = .idle
    }

    private mutating func torchOff() {
        guard torchOn else { return }
        torchOn = false
        actions.append(.flashLED(.off))
    }

    /// After a press stops needing kept frames: keep them for the queued press
    /// if it may still become a clip, otherwise release them.
    private mutating func releaseFrames() {
        if let q = queued, q.gesture != .tap {
            actions.append(.startSpeculativeClip(from: q.at))
        } else {
            actions.append(.discardSpeculativeClip)
        }
    }

    // MARK: - Errors and faults

    private var worstLatchedFault: CaptureFault? {
        faults.filter(\.isLatched).min { $0.ledCode < $1.ledCode }
    }

    private mutating func apply(_ error: CaptureError, _ now: MonotonicTime) {
        if let f = error.latchedFault {
            addFault(f, now)
        } else {
            oneShots.append(.led(.errorOnce(error.ledCode, times: configuration.transientErrorRepeats)))
        }
    }

    private mutating func addFault(_ f: CaptureFault, _ now: MonotonicTime) {
        if f.isLatched { faults.insert(f) }
        switch phase {
        case .pressed(let p) where f.isLatched:
            phase = .idle
            finish(p)
            releaseFrames()
            actions.append(.refused(.fault(f.ledCode), origin: .button(press: p)))
        case .recording(let id, _, _, _):
            // Finish the file: what was recorded is kept.
            stopRecording(id, at: now, now)
        default:
            break
        }
        if !f.isLatched {
            oneShots.append(.led(.errorOnce(f.ledCode, times: configuration.transientErrorRepeats)))
        }
    }

    private mutating func refuse(_ reason: CaptureRefusal, press p: MonotonicTime) {
        finish(p)
        refuse(reason, origin: .button(press: p))
    }

    private mutating func refuse(_ reason: CaptureRefusal, origin: CaptureOrigin) {
        actions.append(.refused(reason, origin: origin))
        switch reason {
        case .fault(let code):
            oneShots.append(.led(.errorOnce(code, times: 1)))
            if code == .storageFull || code == .storageError { actions.append(.probeStorage) }
        case .busy, .notReady, .shuttingDown:
            oneShots.append(.led(.busyRefused))
        case .notRecording, .alreadyRecording:
            break
        }
    }

    // MARK: - Time

    private mutating func tick(_ now: MonotonicTime) {
        switch phase {
        case .pressed(let p) where now >= p + configuration.pressTimeout:
            phase = .idle
            finish(p)
            releaseFrames()
        case .photo(_, _, let since, _) where now >= since + configuration.photoTimeout:
            phase = .idle
            let error = CaptureError(.camera, "the still was not saved within \(configuration.photoTimeout); "
                                     + "the camera may have stalled (the watchdog restarts it); try again")
            actions.append(.failed(error))
            apply(error, now)
        case .recording(let id, let from, let until, _):
            let max = from + configuration.maxRecording
            let end = until.map { Swift.min($0, max) } ?? max
            if now >= end { stopRecording(id, at: end, now) }
        case .finalising(_, let since) where now >= since + configuration.finaliseTimeout:
            phase = .idle
            let error = CaptureError(.encoder, "the clip was not finalised within "
                                     + "\(configuration.finaliseTimeout); what was written is kept; try again")
            actions.append(.failed(error))
            apply(error, now)
        default:
            break
        }
    }

    /// Runs the queued press once idle, and powers off once everything is done.
    /// Returns true when the machine has just powered off.
    private mutating func settle(_ now: MonotonicTime) -> Bool {
        if phase == .idle, let q = queued {
            queued = nil
            if let f = worstLatchedFault {
                finish(q.origin)
                refuse(.fault(f.ledCode), origin: q.origin)
                actions.append(.discardSpeculativeClip)
            } else {
                if q.gesture != .pending { finish(q.origin) }
                switch q.gesture {
                case .pending:
                    phase = .pressed(at: q.at)
                    actions += queuedPhotoStarts
                case .tap:
                    actions += queuedPhotoStarts + [.discardSpeculativeClip]
                    startPhoto(pressedAt: q.at, origin: q.origin, now)
                case .holding:
                    startRecording(from: q.at, origin: q.origin, now)
                case .held(let end) where end > now:
                    // A remote hold whose time is not over yet: it ends by itself.
                    startRecording(from: q.at, origin: q.origin, now, until: end)
                case .held(let end):
                    startRecording(from: q.at, origin: q.origin, now)
                    if case .recording(let id, _, _, _) = phase { stopRecording(id, at: end, now) }
                }
            }
        }
        if shutdownRequested, phase == .idle, queued == nil {
            torchOff()
            phase = .poweredOff
            return true
        }
        return false
    }

    // MARK: - LED

    private var baseIndication: StatusIndication {
        switch phase {
        case .poweredOff: return .off
        case .booting:
            // Still starting because something is missing (no camera, no card): say which.
            return worstLatchedFault.map { .error($0.ledCode) } ?? .booting
        default: break
        }
        if let c = countdown { return .shutdownCountdown(start: c.start, deadline: c.deadline) }
        switch phase {
        case .recording(_, let from, _, _): return .recording(since: from, maxDuration: configuration.maxRecording)
        case .photo, .finalising: return .saving
        default: break
        }
        if let f = worstLatchedFault { return .error(f.ledCode) }
        return .ready
    }

    // MARK: - Press bookkeeping

    private func isFinished(_ p: MonotonicTime) -> Bool { finishedPresses.contains(p) }

    private mutating func finish(_ origin: CaptureOrigin) {
        if case .button(let p) = origin { finish(p) }
    }

    private mutating func finish(_ p: MonotonicTime) {
        guard !finishedPresses.contains(p) else { return }
        finishedPresses.append(p)
        if finishedPresses.count > 16 { finishedPresses.removeFirst(finishedPresses.count - 16) }
    }
}
