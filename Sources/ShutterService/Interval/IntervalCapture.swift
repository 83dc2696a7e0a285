// SPDX-License-Identifier: BSD-2-Clause
import ShutterControl
import ShutterCore
import ShutterStorage

/// Interval capture (docs/interval.md): at every slot of the plan, the photo a tap asks for,
/// through the same capture machine, files, LEDs, events and uploads. Loop-owned: the loop
/// ticks it at its deadline (`tick`), asks for the photo it says is due, and tells it what
/// became of that photo. Its count, pause and last slot are kept on the card
/// (`IntervalStateFile`), read before the loop starts.
///
/// The schedule runs on the wall clock while it is trusted (slots in local time, windows
/// read), else on the monotonic clock (seconds since boot; with windows set, nothing is
/// taken until the clock is trusted, as a window means nothing without the time of day).
final class IntervalCapture {
    enum Clock: String { case wall, monotonic }

    /// Where the timeline stands now: seconds on the clock's timeline and the nanoseconds past.
    struct Reading {
        var clock: Clock
        var seconds: Int64
        var nanoseconds: Int64
        var utcOffsetSeconds: Int32
    }

    private let config: ShutterConfig.Interval
    let plan: IntervalPlan
    private let wallClock: any WallClock
    private let file: IntervalStateFile
    private let log: Log
    private(set) var record = IntervalRecord()
    /// Ticks do nothing before the record is read (`load`).
    private var loaded = false
    /// Slots from here on are taken or counted as skipped; earlier ones passed while the
    /// service was not running, paused or waiting (counted as neither). Per clock. It
    /// reaches back by the grace, so a slot a restart interrupted is still taken, late,
    /// unless the record says it was taken already.
    private var countFrom: (clock: Clock, seconds: Int64)?
    /// The interval's photo asked for and not yet saved or failed: its request, then its capture.
    private var pending: (request: RequestID, capture: CaptureID?)?
    /// When the loop must tick for the next slot (nil: none comes, or the heartbeat will do).
    private(set) var nextDeadline: MonotonicTime?
    private var saidWaiting: String?
    private var saidClock: Clock?
    /// The timeline against the monotonic clock: a step of the wall clock or a change of
    /// the UTC offset (daylight saving) is seen at the next tick (`stepped`).
    private var timeline = IntervalTimeline()
    private var utcOffset: Int32?
    /// After the timeline went back: slots up to here were judged before it did, and come again.
    private var repeatsUpTo: Int64?
    /// When the last slot's photo was asked for.
    private var lastAsked: MonotonicTime?

    /// A slot is taken this late at most (or `everySeconds`, when shorter): a loop that
    /// stalled, a camera slow to come back, a restart. Later, it counts as skipped.
    static let grace: Int64 = 10

    init(ctx: ServiceContext, jobs: Jobs) {
        config = ctx.config.interval
        plan = IntervalPlan(config: ctx.config.interval)
        wallClock = ctx.wallClock
        file = IntervalStateFile(storage: ctx.storage, jobs: jobs)
        log = Log("shutter.interval")
    }

    var enabled: Bool { config.enabled }

    // MARK: Start

    /// Before the loop: the count, pause and last slot kept on the card.
    func load() async {
        guard config.enabled else { return }
        let (kept, unreadable) = await file.load()
        if unreadable { log.warning("interval: \(file.path) does not read; the count starts again from 0") }
        record = kept ?? IntervalRecord()
        loaded = true
        let windows = config.windows.isEmpty ? "" : " within \(config.windows)"
        let limit = config.count > 0 ? " of \(config.count)" : ""
        log.notice("interval: a photo every \(config.everySeconds) s\(windows); \(record.taken)\(limit) taken so far"
                   + (record.paused ? "; paused (`shutterctl interval resume`)" : ""))
    }

    // MARK: The loop's tick

    /// Whether a slot is due now and its photo is to be asked for (the loop then calls
    /// `asked`). `ready`: the camera delivers and the service is not stopping.
    /// `canCapture`: no clip records and no photo is in progress, so the slot's photo would
    /// not be refused or queued behind another; otherwise the slot is skipped, and counted.
    func tick(now: MonotonicTime, ready: Bool, canCapture: Bool) -> Bool {
        nextDeadline = nil
        guard config.enabled, loaded else { return false }
        let r = reading(now: now)
        if r.clock == .wall {
            if let step = timeline.step(timelineNanoseconds: r.seconds &* 1_000_000_000 &+ r.nanoseconds,
                                        monotonicNanoseconds: now.nanoseconds) {
                stepped(step, r)
            }
            utcOffset = r.utcOffsetSeconds
        } else {
            timeline.forget()
        }
        if saidClock != r.clock {
            log.notice("interval: slots on the \(r.clock == .wall ? "wall clock (trusted)" : "monotonic clock (the wall clock is not trusted yet)")")
            saidClock = r.clock
        }
        let why = waiting(r.clock)
        if why != saidWaiting {
            if let why { log.notice("interval: waiting: \(why)") }
            saidWaiting = why
        }
        guard why == nil else {
            countFrom = nil
            return false
        }
        let t = r.seconds
        if let next = plan.nextSlot(after: t) {
            let d = Duration.seconds(next - t) - .nanoseconds(r.nanoseconds)
            nextDeadline = now + max(d, .milliseconds(1))
        }
        let grace = min(plan.everySeconds, Self.grace)
        if countFrom?.clock != r.clock { countFrom = ready ? (r.clock, t - grace + 1) : nil }
        guard let from = countFrom, let slot = plan.latestSlot(atOrBefore: t), slot >= from.seconds else { return false }
        let last = lastSlot(on: r.clock, notAfter: t)
        if let last, slot <= last { return false }
        if let upTo = repeatsUpTo {
            if slot > upTo {
                repeatsUpTo = nil
            } else if let asked = lastAsked, now - asked < .seconds(plan.everySeconds) / 2 {
                // A slot the clock going back brings again right after its photo: passed, counted as neither.
                record.lastSlot = slot
                record.lastSlotClock = r.clock.rawValue
                file.save(record)
                log.info("interval: slot \(text(slot, r)) passed: it came again as the clock went back, "
                         + "\((now - asked).milliseconds / 1000) s after the last photo")
                return false
            }
        }
        // Slots passed by since the last one judged (a loop that stalled longer than the interval).
        let missed = slotsBetween(max(last ?? from.seconds - 1, from.seconds - 1), slot)
        record.skipped += missed
        record.lastSlot = slot
        record.lastSlotClock = r.clock.rawValue
        let late = t - slot
        let skip: String?
        if !ready { skip = "the camera is not ready" }
        else if pending != nil || !canCapture { skip = "a capture is in progress" }
        else if late >= grace { skip = "\(late) s late" }
        else { skip = nil }
        if let skip {
            record.skipped += 1
            log.info("interval: slot \(text(slot, r)) skipped: \(skip)")
        } else {
            record.taken += 1
            lastAsked = now
            if plan.isFinished(taken: record.taken) { log.notice("interval: the count (\(config.count)) is reached") }
        }
        file.save(record)
        return skip == nil
    }

    /// The timeline moved against the monotonic clock by `step` ns (NTP, a person, daylight
    /// saving): the schedule goes on from the new time in real time. Slots the step jumped
    /// over never were (neither taken nor skipped), none is caught up; after a step back the
    /// slots that come again are taken, unless one comes within half an interval of the
    /// last photo (`repeatsUpTo`).
    private func stepped(_ step: Int64, _ r: Reading) {
        let grace = min(plan.everySeconds, Self.grace)
        if countFrom?.clock == .wall { countFrom = (.wall, r.seconds - grace + 1) }
        if step < 0, record.lastSlotClock == Clock.wall.rawValue, let s = record.lastSlot {
            repeatsUpTo = max(repeatsUpTo ?? s, s)
        }
        if let before = utcOffset, before != r.utcOffsetSeconds {
            log.notice("interval: the UTC offset changed from \(Self.offset(before)) to \(Self.offset(r.utcOffsetSeconds)) "
                       + "(daylight saving): slots go on in local time; none is caught up or counted as skipped")
        } else {
            log.notice("interval: the wall clock was set \(step > 0 ? "forward" : "back") by \(IntervalTimeline.words(step)): "
                       + "slots go on from the new time; none is caught up or counted as skipped")
        }
    }

    private static func offset(_ s: Int32) -> String {
        let a = abs(Int(s)), h = a / 3600, m = a % 3600 / 60
        return (s < 0 ? "-" : "+") + (h < 10 ? "0" : "") + String(h) + ":" + (m < 10 ? "0" : "") + String(m)
    }

    /// Why no slot is taken now, nil when they are.
    private func waiting(_ clock: Clock) -> String? {
        if record.paused { return "paused (`shutterctl interval resume` goes on)" }
        if plan.isFinished(taken: record.taken) {
            return "the count (interval.count \(config.count)) is reached (`shutterctl interval reset` starts it again)"
        }
        if clock == .monotonic && !plan.windows.isEmpty {
            return "interval.windows needs a trusted wall clock (NTP, or an RTC); no slot until the clock is trusted"
        }
        return nil
    }

    /// The last slot judged, when it was on this clock and is not in its future (a reboot
    /// starts the monotonic clock again; a wall clock set back).
    private func lastSlot(on clock: Clock, notAfter t: Int64) -> Int64? {
        guard record.lastSlotClock == clock.rawValue, let s = record.lastSlot, s <= t else { return nil }
        return s
    }

    /// Slots strictly between `a` and `b` (at most 1000 counted: a clock that jumped).
    private func slotsBetween(_ a: Int64, _ b: Int64) -> Int {
        var n = 0, s = a
        while n < 1000, let next = plan.nextSlot(after: s), next < b {
            n += 1
            s = next
        }
        return n
    }

    private func reading(now: MonotonicTime) -> Reading {
        let w = wallClock.now()
        if w.isTrusted {
            return Reading(clock: .wall, seconds: w.secondsSinceEpoch + Int64(w.utcOffsetSeconds),
                           nanoseconds: Int64(w.nanoseconds), utcOffsetSeconds: w.utcOffsetSeconds)
        }
        let ns = now.nanoseconds
        return Reading(clock: .monotonic, seconds: ns / 1_000_000_000, nanoseconds: ns % 1_000_000_000, utcOffsetSeconds: 0)
    }

    // MARK: The slot's photo

    /// The loop asked for the slot's photo as request `id`.
    func asked(_ id: RequestID) { pending = (id, nil) }

    /// The machine made `origin`'s capture `id` (a photo it takes, or one it answers with).
    func bound(_ origin: CaptureOrigin, to id: CaptureID) {
        guard case .request(let r) = origin, pending?.request == r else { return }
        pending?.capture = id
    }

    /// The machine refused `origin`: when it was the slot's photo, the slot counts as skipped.
    func refused(_ origin: CaptureOrigin, why: String) {
        guard case .request(let r) = origin, let p = pending, p.request == r, p.capture == nil else { return }
        pending = nil
        record.taken -= 1
        record.skipped += 1
        log.info("interval: the slot's photo was refused (\(why)); counted as skipped")
        file.save(record)
    }

    /// Capture `id` ended: true when it was the slot's photo (its events say "interval").
    /// A photo that failed does not count as taken.
    func finished(_ id: CaptureID, ok: Bool) -> Bool {
        guard let p = pending, p.capture == id else { return false }
        pending = nil
        if !ok {
            record.taken -= 1
            record.failed += 1
            file.save(record)
        }
        return true
    }

    func saved(problem: String?) {
        if let problem { log.warning("interval: cannot keep the count in \(file.path): \(problem)") }
    }

    // MARK: Commands

    func pause() {
        guard !record.paused else { return }
        record.paused = true
        log.notice("interval: paused")
        file.save(record)
    }

    func resume() {
        guard record.paused else { return }
        record.paused = false
        log.notice("interval: resumed")
        file.save(record)
    }

    /// The count starts again; the last slot is kept, so the slot just taken is not taken again.
    func reset() {
        record.taken = 0
        record.skipped = 0
        record.failed = 0
        log.notice("interval: the count starts again")
        file.save(record)
    }

    // MARK: Status

    func report(now: MonotonicTime) -> IntervalReport {
        let r = reading(now: now)
        let usable = r.clock == .wall || plan.windows.isEmpty
        var out = IntervalReport(enabled: config.enabled, clock: r.clock.rawValue, everySeconds: config.everySeconds)
        out.paused = record.paused
        out.windows = config.windows
        out.count = config.count
        out.taken = record.taken
        out.skipped = record.skipped
        out.failed = record.failed
        out.waiting = waiting(r.clock)
        if out.waiting == nil, usable, let next = plan.nextSlot(after: r.seconds) {
            out.nextInSeconds = Double((next - r.seconds) * 1_000_000_000 - r.nanoseconds) / 1e9
            if r.clock == .wall { out.nextSlot = text(next, r) }
        } else if out.waiting == nil {
            out.waiting = "no window holds a slot within \(IntervalPlan.searchSeconds / 86_400) days"
        }
        if let last = record.lastSlot {
            out.lastSlotSeconds = last
            if record.lastSlotClock == Clock.wall.rawValue, r.clock == .wall { out.lastSlot = text(last, r) }
        }
        return out
    }

    /// A slot on the reading's timeline in words: local time, or seconds since boot.
    private func text(_ slot: Int64, _ r: Reading) -> String {
        guard r.clock == .wall else { return "\(slot) s after boot" }
        return ISO8601Text.local(slot - Int64(r.utcOffsetSeconds), utcOffsetSeconds: r.utcOffsetSeconds)
    }
}
