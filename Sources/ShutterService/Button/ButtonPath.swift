// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// The button's edges to gestures: the physical (or simulated) button, a
/// control-socket client's `press`/`release`, the terminal's space bar, all
/// through one recognizer.
///
/// Every rule is decided on the edges' kernel timestamps: when a deadline falls
/// due (a burst steady for 20 ms, the hold threshold) the button is first asked
/// to catch up (`ButtonInput.catchUp`) and the deadline is decided behind its
/// answer, so a bounce whose later edges are delayed by a loaded CPU is still
/// one press. When the button can tell that every edge it has seen is already
/// delivered and none waits in the inbox, the deadline is decided at once: no round
/// trip. With no button, or one that does not answer within a second, the clock decides.
final class ButtonPath {
    static let catchUpTimeout = Duration.seconds(1)

    private let button: (any ButtonInput)?
    private let log: Log
    private var recognizer: GestureRecognizer
    /// When a deadline fell due and the button was asked to catch up, until it answers.
    private var catchUpAskedAt: MonotonicTime?
    /// The press being held (known to the machine), for a client's `release`.
    private(set) var heldPress: MonotonicTime?
    /// The press a control-socket client made (`press`), until its `release`.
    var clientPress: MonotonicTime?

    /// Whether button events wait in the loop's inbox, not yet handled.
    private let eventsWaiting: () -> Bool

    init(config: ShutterConfig, button: (any ButtonInput)?, log: Log, eventsWaiting: @escaping () -> Bool = { true }) {
        self.button = button
        self.eventsWaiting = eventsWaiting
        self.log = log
        recognizer = GestureRecognizer(settings: GestureSettings(config: config))
    }

    /// An event of the button itself.
    func event(_ e: ButtonEvent) -> [GestureEvent] {
        log.debug("button \(e)")
        switch e {
        case .edge(let edge):
            return observe(recognizer.feed(edge))
        case .caughtUp(let t):
            catchUpAskedAt = nil
            return observe(recognizer.advance(to: t))
        }
    }

    /// A raw edge from a client's press/release or the terminal.
    func edge(_ e: ButtonEdge) -> [GestureEvent] { observe(recognizer.feed(e)) }

    /// Gestures settled by the time `now` (a client's release counts its press first).
    func advance(to now: MonotonicTime) -> [GestureEvent] { observe(recognizer.advance(to: now)) }

    /// On the timer: a deadline that fell due is decided once the button has caught up.
    func tick(now: MonotonicTime) -> [GestureEvent] {
        guard let d = recognizer.nextDeadline, d <= now else { return [] }
        // In this order: an edge read from the kernel after the button's check is in the inbox.
        if catchUpAskedAt == nil, let button, button.allEdgesDelivered, !eventsWaiting() {
            return observe(recognizer.advance(to: now))
        }
        if let button, !(catchUpAskedAt.map { now - $0 >= Self.catchUpTimeout } ?? false) {
            if catchUpAskedAt == nil {
                catchUpAskedAt = now
                button.catchUp()
            }
            return []
        }
        if catchUpAskedAt != nil { log.warning("the button did not catch up within 1 s: gestures decided on the clock") }
        catchUpAskedAt = nil
        return observe(recognizer.advance(to: now))
    }

    /// While the button catches up its answer wakes the loop; the timeout is the bound.
    var nextDeadline: MonotonicTime? { catchUpAskedAt.map { $0 + Self.catchUpTimeout } ?? recognizer.nextDeadline }

    private func observe(_ gestures: [GestureEvent]) -> [GestureEvent] {
        for g in gestures {
            log.debug("gesture \(g)")
            switch g {
            case .pressed(let p): heldPress = p
            case .tap(let s, _), .hold(let s, _), .doubleTap(let s, _): if heldPress == s { heldPress = nil }
            case .shutdownCountdown: log.notice("shutdown gesture: countdown started, release to cancel")
            default: break
            }
        }
        return gestures
    }
}
