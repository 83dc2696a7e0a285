// SPDX-License-Identifier: BSD-2-Clause
import ShutterControl
import ShutterCore

/// Trigger inputs (docs/triggers.md), loop-owned: each line's edges through its rules
/// (ShutterCore's `TriggerRules`: debounce, hold-off, windows, a clip's end), and what an
/// activation wants of the capture machine, asked for by the loop as the commands a request
/// sends (`ServiceLoop+Triggers`): the same captures, files, LEDs, events and uploads as the
/// button's.
///
/// The button keeps priority: a trigger asks only when the machine takes the capture at once
/// (no capture in progress; a photo also while a clip records, as a still from the video),
/// never into the machine's one queued place, which stays the button's. What waits longer than
/// `patience` is skipped. A tap during a trigger's clip is a still from the video (the clip
/// goes on); a hold during it keeps the clip going until the release.
final class TriggerPath {
    /// How long an activation's photos may wait for the machine to be free (a photo saving,
    /// a press being decided): past it, skipped (counted). A clip waits while it would last
    /// (the input active, or within its `clipAfterSeconds`).
    static let patience = Duration.seconds(10)
    static let catchUpTimeout = Duration.seconds(1)

    struct Line {
        let config: ShutterConfig.Triggers.Input
        let input: (any ButtonInput)?
        /// Its daily windows as interval capture reads them (nil: all day).
        let windows: IntervalPlan?
        var rules: TriggerRules
        var report: TriggerReport
        /// When a deadline fell due and the line was asked to catch up, until it answers.
        var catchUpAskedAt: MonotonicTime?
        /// Photos still to ask for (a burst's rest); a clip to start; since when they wait.
        var photosWanted = 0
        var clipWanted = false
        var wantedSince: MonotonicTime?
        /// The capture asked for: its request, then the capture it became (a photo until it
        /// ends; a clip until it starts).
        var asked: (request: RequestID, capture: CaptureID?, clip: Bool)?
        /// The trigger's clip, recording.
        var clip: CaptureID?
        /// Its end came and its stop waits (the clip not started yet, the button held).
        var stopDue = false
        /// Its stop was asked for (an end by other means tells the rules).
        var stopAsked = false
    }

    private(set) var lines: [Line]
    /// Captures made for a trigger, until they end: capture → line.
    private var captures: [CaptureID: Int] = [:]
    private let wallClock: any WallClock
    private let live: LiveReport
    private let log = Log("shutter.trigger")
    private let eventsWaiting: () -> Bool
    private var saidUntrusted = false

    init(config: ShutterConfig, roles: [TriggerLineRole], wallClock: any WallClock, live: LiveReport,
         eventsWaiting: @escaping () -> Bool) {
        self.wallClock = wallClock
        self.live = live
        self.eventsWaiting = eventsWaiting
        lines = config.triggers.inputs.enumerated().map { i, c in
            let role = i < roles.count && roles[i].name == c.name ? roles[i] : nil
            var report = TriggerReport(name: c.name, action: c.action.rawValue)
            report.windows = c.windows
            report.problem = role?.problem ?? (role == nil ? "no line on this board" : nil)
            let windows = (try? IntervalPlan.windows(c.windows)).flatMap { $0.isEmpty ? nil : IntervalPlan(everySeconds: 60, windows: $0) }
            return Line(config: c, input: role?.input, windows: windows,
                        rules: TriggerRules(settings: TriggerRules.Settings(c)), report: report)
        }
    }

    var isEmpty: Bool { lines.isEmpty }

    /// The start, in the log: each input, its line and what it does.
    func describe() {
        for l in lines {
            let c = l.config
            let what: String
            switch c.action {
            case .photo: what = "a photo"
            case .burst: what = "a burst of \(c.burstCount) photos"
            case .clip: what = "a clip while active + \(c.clipAfterSeconds) s"
            }
            let windows = c.windows.isEmpty ? "" : ", within \(c.windows)"
            log.notice("trigger \(c.name): line \(c.line)\(c.activeLow ? " (active low)" : ""), \(what), hold-off "
                       + "\(c.holdOffSeconds) s\(windows)" + (l.report.problem.map { "; does nothing: \($0)" } ?? ""))
        }
    }

    // MARK: Edges and time

    /// An event of line `i`: an edge, or its caught-up answer.
    func event(_ i: Int, _ e: ButtonEvent, now: MonotonicTime) {
        guard lines.indices.contains(i) else { return }
        let open = windowOpen(i)
        switch e {
        case .edge(let edge):
            apply(i, lines[i].rules.feed(active: edge.pressed, at: edge.time, windowOpen: open), now: now)
        case .caughtUp(let t):
            lines[i].catchUpAskedAt = nil
            apply(i, lines[i].rules.advance(to: t, windowOpen: open), now: now)
        }
    }

    /// On the loop's tick: a due deadline is decided once the line has caught up (as the
    /// button's: an edge a loaded CPU delivers late still counts before it).
    func tick(now: MonotonicTime) {
        for i in lines.indices {
            guard let d = lines[i].rules.nextDeadline, d <= now else { continue }
            let input = lines[i].input
            if lines[i].catchUpAskedAt == nil, let input, input.allEdgesDelivered, !eventsWaiting() {
                apply(i, lines[i].rules.advance(to: now, windowOpen: windowOpen(i)), now: now)
            } else if let input, !(lines[i].catchUpAskedAt.map { now - $0 >= Self.catchUpTimeout } ?? false) {
                if lines[i].catchUpAskedAt == nil {
                    lines[i].catchUpAskedAt = now
                    input.catchUp()
                }
            } else {
                if lines[i].catchUpAskedAt != nil {
                    log.warning("trigger \(lines[i].config.name): the line did not catch up within 1 s; decided on the clock")
                }
                lines[i].catchUpAskedAt = nil
                apply(i, lines[i].rules.advance(to: now, windowOpen: windowOpen(i)), now: now)
            }
        }
    }

    /// When the loop must look again: a line's deadline (or its catch-up's bound), a capture
    /// waiting for its patience to run out.
    var nextDeadline: MonotonicTime? {
        var all: [MonotonicTime] = []
        for l in lines {
            if let asked = l.catchUpAskedAt { all.append(asked + Self.catchUpTimeout) } else if let d = l.rules.nextDeadline { all.append(d) }
            if let since = l.wantedSince, l.photosWanted > 0 { all.append(since + Self.patience) }
        }
        return all.min()
    }

    /// Whether an activation now would be in one of line `i`'s windows (always without
    /// windows; never while the wall clock is not trusted: a window needs the time of day).
    private func windowOpen(_ i: Int) -> Bool {
        guard let plan = lines[i].windows else { return true }
        let w = wallClock.now()
        guard w.isTrusted else {
            if !saidUntrusted {
                log.notice("trigger \(lines[i].config.name): windows need a trusted wall clock (NTP, or an RTC); "
                           + "activations fire nothing until it is trusted")
                saidUntrusted = true
            }
            return false
        }
        return plan.isInWindow(w.secondsSinceEpoch + Int64(w.utcOffsetSeconds))
    }

    private func apply(_ i: Int, _ events: [TriggerRules.Event], now: MonotonicTime) {
        let name = lines[i].config.name
        for e in events {
            switch e {
            case .changed(let active, _):
                lines[i].report.active = active
                log.info("trigger \(name): \(active ? "active" : "inactive")")
                live.trigger(name: name, active: active)
            case .fired:
                lines[i].report.fired += 1
                log.notice("trigger \(name): fired")
                switch lines[i].config.action {
                case .photo: lines[i].photosWanted = 1
                case .burst: lines[i].photosWanted = lines[i].config.burstCount
                case .clip:
                    lines[i].clipWanted = true
                    lines[i].stopDue = false
                }
                lines[i].wantedSince = now
            case .ignored(_, let why):
                lines[i].report.ignored += 1
                log.info("trigger \(name): active, fires nothing (\(why.rawValue))")
            case .extended:
                log.debug("trigger \(name): active again, its clip goes on")
            case .clipEnds:
                if lines[i].clipWanted && lines[i].asked == nil {
                    // Inactive long enough before the camera was free: no clip.
                    lines[i].clipWanted = false
                    lines[i].report.skipped += 1
                    log.info("trigger \(name): its clip could not start before its end (the camera was busy); skipped")
                } else {
                    lines[i].stopDue = true
                }
            }
        }
    }

    // MARK: What to ask of the machine

    /// The next command a trigger asks for now, if any (the loop gives it, then asks again).
    /// `free`: no capture in progress; `recording`: a clip records (a photo is a still from
    /// it); `ready`: the camera delivers and the service is not stopping; `buttonHeld`: a
    /// press of the button is down (a trigger's clip goes on until its release); `booting`:
    /// the camera has not delivered its first frame since the start.
    func next(free: Bool, recording: Bool, ready: Bool, booting: Bool, buttonHeld: Bool,
              now: MonotonicTime) -> (line: Int, CaptureCommand)? {
        for i in lines.indices {
            // An input active from power-on waits for the first frame: its patience starts there.
            if booting, lines[i].wantedSince != nil { lines[i].wantedSince = now }
            expire(i, now: now)
            let l = lines[i]
            if l.stopDue, l.clip != nil, !buttonHeld { return (i, .recordStop) }
            guard l.asked == nil, ready else { continue }
            if l.clipWanted, free { return (i, .recordStart(stopAfter: nil)) }
            if l.photosWanted > 0, free || recording { return (i, .photo) }
        }
        return nil
    }

    /// The loop asked for line `i`'s command as request `id`.
    func asked(_ i: Int, _ command: CaptureCommand, as id: RequestID) {
        switch command {
        case .photo:
            lines[i].photosWanted -= 1
            lines[i].asked = (id, nil, false)
        case .recordStart:
            lines[i].clipWanted = false
            lines[i].asked = (id, nil, true)
        case .recordStop:
            lines[i].stopDue = false
            lines[i].stopAsked = true
            log.info("trigger \(lines[i].config.name): inactive for \(lines[i].config.clipAfterSeconds) s; its clip ends")
        }
        if lines[i].photosWanted == 0 && !lines[i].clipWanted { lines[i].wantedSince = nil }
    }

    /// Photos waited past the patience: skipped.
    private func expire(_ i: Int, now: MonotonicTime) {
        guard let since = lines[i].wantedSince, now - since >= Self.patience, lines[i].asked == nil else { return }
        let photos = lines[i].photosWanted
        guard photos > 0 else { return }
        lines[i].report.skipped += photos
        lines[i].photosWanted = 0
        lines[i].wantedSince = nil
        log.warning("trigger \(lines[i].config.name): the camera was busy or not ready for \(Self.patience); "
                    + "\(photos == 1 ? "its photo" : "\(photos) photos") skipped")
    }

    // MARK: What became of it

    /// The machine made `origin`'s capture `id` (a photo, a still from a clip, a clip).
    func bound(_ origin: CaptureOrigin, to id: CaptureID) {
        guard case .request(let r) = origin, let i = lines.firstIndex(where: { $0.asked?.request == r }) else { return }
        captures[id] = i
        if lines[i].asked?.clip == true {
            lines[i].asked = nil
            lines[i].clip = id
            lines[i].stopAsked = false
        } else {
            lines[i].asked?.capture = id
        }
    }

    /// The machine refused `origin`: when a trigger asked, what it wanted is dropped.
    func refused(_ origin: CaptureOrigin, why: String) {
        guard case .request(let r) = origin, let i = lines.firstIndex(where: { $0.asked?.request == r }),
              lines[i].asked?.capture == nil else { return }
        let clip = lines[i].asked?.clip == true
        lines[i].asked = nil
        lines[i].report.skipped += 1 + lines[i].photosWanted
        lines[i].photosWanted = 0
        lines[i].wantedSince = nil
        if clip { lines[i].rules.clipEnded() }
        log.info("trigger \(lines[i].config.name): refused (\(why)); skipped")
    }

    /// Capture `id` ended (`ok`: its file saved): the trigger's name when a trigger made it
    /// (its events say so). A burst's next photo may be asked for from here.
    func finished(_ id: CaptureID, ok: Bool, now: MonotonicTime) -> String? {
        guard let i = captures.removeValue(forKey: id) else { return nil }
        if lines[i].clip == id {
            lines[i].clip = nil
            lines[i].stopDue = false
            if ok { lines[i].report.clips += 1 } else { lines[i].report.skipped += 1 }
            // Ended before its stop was asked for (the maximum duration, a fault): a new
            // activation starts the next one.
            if !lines[i].stopAsked { lines[i].rules.clipEnded() }
        } else if lines[i].asked?.capture == id {
            lines[i].asked = nil
            if ok { lines[i].report.photos += 1 } else { lines[i].report.skipped += 1 }
            if lines[i].photosWanted > 0 { lines[i].wantedSince = now }
        }
        return lines[i].config.name
    }

    // MARK: Status

    func reports() -> [TriggerReport] {
        lines.indices.map { i in
            var r = lines[i].report
            r.windowOpen = lines[i].windows == nil || {
                let w = wallClock.now()
                return w.isTrusted && lines[i].windows!.isInWindow(w.secondsSinceEpoch + Int64(w.utcOffsetSeconds))
            }()
            return r
        }
    }
}
