// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import Synchronization

/// The status and flash LEDs: the pattern the machine last chose for each (what
/// `status` names) and their drivers, which play it on their own clock.
///
/// Each LED's changes go through one ordered channel, played by one task (`play`, a
/// service of the group): a saved photo asks for `.ready` then `.photoTaken` in one
/// event, and they reach the driver in that order. (As separate jobs they raced, and a
/// `.ready` that came second cleared the blink: the only thing a headless user sees.)
///
/// Work in flight: each change counts from the loop's `show` until its driver has it (a
/// `WorkToken` travels with it); a driver's timer counts from the change that set it
/// until it sleeps on the clock, and again from its deadline until its edge is written.
final class LEDs: Sendable {
    let status: LEDDriver?
    let flash: LEDDriver?
    private let statusChanges: (stream: AsyncStream<(StatusIndication, WorkToken)>,
                                continuation: AsyncStream<(StatusIndication, WorkToken)>.Continuation)
    /// A flash change, the event to post once it is played (a still's flash is lit), its work.
    private typealias FlashChange = (indication: FlashIndication, then: ServiceEvent?, token: WorkToken)
    private let flashChanges: (stream: AsyncStream<FlashChange>, continuation: AsyncStream<FlashChange>.Continuation)
    /// The patterns' names, set by the loop and read for `status`.
    private let names = Mutex(NamedPatterns())
    private let work: InFlight

    init(roles: BoardRoles, clock: any MonotonicClock, work: InFlight = InFlight()) {
        let log = Log("shutter.led")
        self.work = work
        status = roles.statusLED.map { LEDDriver(output: $0, clock: clock, log: { log.warning($0) }, work: work) }
        flash = roles.flashLED.map { LEDDriver(output: $0, clock: clock, log: { log.warning($0) }, work: work) }
        statusChanges = AsyncStream.makeStream(of: (StatusIndication, WorkToken).self)
        flashChanges = AsyncStream.makeStream(of: FlashChange.self)
    }

    func show(_ indication: StatusIndication) {
        names.withLock { $0.status = Self.name(indication) }
        // A change not taken (closed) ends its token as it is dropped.
        if status != nil { statusChanges.continuation.yield((indication, work.token())) }
    }

    /// The flash changes, in order; `then` is posted once it is played (the LED is lit
    /// before a still's exposure begins). Only with a flash LED (`flash` not nil).
    func show(_ indication: FlashIndication, then: ServiceEvent? = nil) {
        names.withLock { $0.flash = Self.name(indication) }
        if flash != nil { flashChanges.continuation.yield((indication, then, work.token())) }
    }

    /// Plays each LED's changes in order until `close`; `post` takes the events to post after a change.
    func play(post: @escaping @Sendable (ServiceEvent) -> Void) async {
        await withDiscardingTaskGroup { group in
            if let d = status {
                let changes = statusChanges.stream
                group.addTask {
                    for await (i, token) in changes {
                        await token.run { await d.show(i) }
                        token.end()
                    }
                }
            }
            if let d = flash {
                let changes = flashChanges.stream
                group.addTask {
                    for await (i, then, token) in changes {
                        await token.run { await d.show(i) }
                        if let then { post(then) }  // posted before the change's work ends
                        token.end()
                    }
                }
            }
        }
    }

    /// No more changes: `play` returns once it has played those already sent.
    func close() {
        statusChanges.continuation.finish()
        flashChanges.continuation.finish()
    }

    /// What each LED shows now: the level its driver last wrote, and the pattern's name.
    var levels: [String: ServiceStatus.LEDState] {
        var leds: [String: ServiceStatus.LEDState] = [:]
        let named = names.withLock { $0 }
        if let d = status { leds["status"] = .init(on: d.lastLevel ?? false, pattern: named.status) }
        if let d = flash { leds["flash"] = .init(on: d.lastLevel ?? false, pattern: named.flash) }
        return leds
    }

    static func name(_ s: StatusIndication) -> String { String("\(s)".prefix { $0 != "(" }) }
    static func name(_ f: FlashIndication) -> String { String("\(f)".prefix { $0 != "(" }) }
}

/// The patterns' names, set by the loop and read for `status` (also on the loop).
private struct NamedPatterns: Sendable {
    var status = "booting"
    var flash = "off"
}
