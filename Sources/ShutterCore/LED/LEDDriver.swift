// SPDX-License-Identifier: BSD-2-Clause
import Synchronization

/// Plays patterns onto one `LEDOutput` on an injected clock. A looping pattern
/// is the LED's state; a one-shot pattern plays over it and then the state
/// pattern resumes on its own timeline (a recording blink keeps its pace).
/// A failing LED write is logged once and never reaches the caller: a broken
/// LED must not stop the camera.
public actor LEDDriver {
    private struct Playing {
        var pattern: LEDPattern
        var origin: MonotonicTime
    }

    private let output: any LEDOutput
    private let clock: any MonotonicClock
    private let log: @Sendable (String) -> Void
    /// Where the timer counts as work in flight (see `refresh`); nil: not counted.
    private let work: InFlight?
    private var base = Playing(pattern: .off, origin: MonotonicTime(nanoseconds: 0))
    private var overlay: Playing?
    private var timer: Task<Void, Never>?
    /// Bumped on every reschedule so a timer that fired late does nothing.
    private var generation: UInt64 = 0
    private var written: Bool? {
        didSet { shown.withLock { $0 = written } }
    }
    /// `written`, readable without awaiting the actor (the service's status).
    private let shown = Mutex<Bool?>(nil)
    private var failureLogged = false

    /// Writes that threw (the first one is logged).
    public private(set) var writeFailures = 0
    /// The level last written successfully, nil before the first write.
    public var level: Bool? { written }
    /// The same, read from outside the actor without waiting for it.
    public nonisolated var lastLevel: Bool? { shown.withLock { $0 } }

    public init(output: any LEDOutput, clock: any MonotonicClock,
                log: @escaping @Sendable (String) -> Void, work: InFlight? = nil) {
        self.output = output
        self.clock = clock
        self.log = log
        self.work = work
    }

    /// Shows `pattern` with its timeline starting at `origin` (default now).
    /// A `.forever` pattern replaces the state (and ends any one-shot); a
    /// `.once` pattern plays over the state.
    public func show(_ pattern: LEDPattern, from origin: MonotonicTime? = nil) {
        let playing = Playing(pattern: pattern, origin: origin ?? clock.now())
        if pattern.repeats == .forever {
            base = playing
            overlay = nil
        } else {
            overlay = playing
        }
        refresh()
    }

    public func show(_ indication: StatusIndication) {
        show(indication.pattern, from: indication.origin)
    }

    public func show(_ indication: FlashIndication) {
        show(indication.pattern, from: indication.origin)
    }

    /// Turns the LED off and stops the timer (service shutdown).
    public func stop() {
        base = Playing(pattern: .off, origin: clock.now())
        overlay = nil
        refresh()
        timer?.cancel()
        timer = nil
    }

    private func refresh() {
        let now = clock.now()
        if let o = overlay, o.pattern.isFinished(at: now - o.origin) { overlay = nil }
        let active = overlay ?? base
        let offset = now - active.origin
        write(active.pattern.level(at: offset))

        timer?.cancel()
        timer = nil
        generation &+= 1
        guard let next = active.pattern.nextChange(after: offset) else { return }
        let wake = active.origin + next
        let gen = generation
        let clock = self.clock
        // The one unstructured task here: a pattern's next edge, cancelled at every
        // reschedule; the driver outlives no service that owns it. Its token counts it until
        // it sleeps on the clock, and from its deadline (the clock takes it again) until the
        // edge is written: the sleep itself is no work in flight.
        let token = work?.token()
        timer = Task { [weak self] in
            guard let token else {
                do { try await clock.sleep(until: wake) } catch { return }
                await self?.timerFired(gen)
                return
            }
            await token.run {
                do { try await clock.sleep(until: wake) } catch { return }
                await self?.timerFired(gen)
            }
            token.end()
        }
    }

    private func timerFired(_ gen: UInt64) {
        guard gen == generation else { return }
        refresh()
    }

    private func write(_ on: Bool) {
        guard on != written else { return }
        do {
            try output.set(on)
            written = on
        } catch {
            writeFailures += 1
            // Forget the level so the next change retries the write.
            written = nil
            if !failureLogged {
                failureLogged = true
                log("LED \(output.name): write failed (\(error)); carrying on without it")
            }
        }
    }
}
