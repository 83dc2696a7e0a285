// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// The status and flash LEDs: the pattern the machine last chose for each
/// (what `status` names) and their drivers, which play it on their own clock.
final class LEDs {
    let status: LEDDriver?
    let flash: LEDDriver?
    private var statusPattern = "booting"
    private var flashPattern = "off"

    init(roles: BoardRoles, clock: any MonotonicClock) {
        let log = Log("shutter.led")
        status = roles.statusLED.map { LEDDriver(output: $0, clock: clock, log: { log.warning($0) }) }
        flash = roles.flashLED.map { LEDDriver(output: $0, clock: clock, log: { log.warning($0) }) }
    }

    func show(_ indication: StatusIndication, jobs: Jobs) {
        statusPattern = Self.name(indication)
        guard let d = status else { return }
        jobs.start {
            await d.show(indication)
            return .nothing
        }
    }

    func show(_ indication: FlashIndication, jobs: Jobs) {
        flashPattern = Self.name(indication)
        guard let d = flash else { return }
        jobs.start {
            await d.show(indication)
            return .nothing
        }
    }

    /// What each LED shows now: the level its driver last wrote, and the pattern's name.
    var levels: [String: ServiceStatus.LEDState] {
        var leds: [String: ServiceStatus.LEDState] = [:]
        if let d = status { leds["status"] = .init(on: d.lastLevel ?? false, pattern: statusPattern) }
        if let d = flash { leds["flash"] = .init(on: d.lastLevel ?? false, pattern: flashPattern) }
        return leds
    }

    static func name(_ s: StatusIndication) -> String { String("\(s)".prefix { $0 != "(" }) }
    static func name(_ f: FlashIndication) -> String { String("\(f)".prefix { $0 != "(" }) }
}
