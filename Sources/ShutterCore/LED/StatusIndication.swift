// SPDX-License-Identifier: BSD-2-Clause
/// What the status LED should say. The capture state machine emits these; each
/// maps to an `LEDPattern` and the origin its timeline starts from.
public enum StatusIndication: Equatable, Sendable {
    case off
    /// Service starting, camera warming up: slow blink.
    case booting
    /// Ready for a press: steady on.
    case ready
    /// One-shot: a photo or clip was saved.
    case photoTaken
    /// Recording since `since` (the press time): a blink that gets faster as
    /// `maxDuration` nears.
    case recording(since: MonotonicTime, maxDuration: Duration)
    /// Saving a still or finalising a clip: fast flicker.
    case saving
    /// Shutdown countdown from `start` to `deadline`: accelerating blink, then off.
    case shutdownCountdown(start: MonotonicTime, deadline: MonotonicTime)
    /// One-shot: a press was refused because the camera is busy.
    case busyRefused
    /// A latched fault: the code loops until the fault clears.
    case error(LEDErrorCode)
    /// One-shot: the code is shown `times` times, then the LED returns to its state.
    case errorOnce(LEDErrorCode, times: Int)

    /// True for the events that play over the current state and then end.
    public var isOneShot: Bool { pattern.repeats == .once }

    /// Where the pattern's timeline starts; nil means "now".
    public var origin: MonotonicTime? {
        switch self {
        case .recording(let since, _): return since
        case .shutdownCountdown(let start, _): return start
        default: return nil
        }
    }

    public var pattern: LEDPattern {
        switch self {
        case .off: return .off
        case .booting: return LEDPattern([.on(500), .off(500)], repeats: .forever)
        case .ready: return .steady(true)
        // Against the steady "ready" light a blip has to be dark-light-dark to be seen.
        case .photoTaken: return LEDPattern([.off(100), .on(100), .off(100)], repeats: .once)
        case .recording(_, let max):
            return .accelerating(over: max, startPeriod: .milliseconds(1000), endPeriod: .milliseconds(200),
                                 repeats: .forever)
        case .saving: return LEDPattern([.on(100), .off(100)], repeats: .forever)
        case .shutdownCountdown(let start, let deadline):
            return .accelerating(over: deadline - start, startPeriod: .milliseconds(400),
                                 endPeriod: .milliseconds(80), repeats: .once)
        case .busyRefused:
            return LEDPattern([.off(60), .on(60), .off(60), .on(60), .off(60), .on(60), .off(60)], repeats: .once)
        case .error(let code): return Self.errorCycle(code, repeats: .forever)
        case .errorOnce(let code, let times):
            let cycle = Self.errorCycle(code, repeats: .once)
            return LEDPattern(Array(repeating: cycle.steps, count: max(1, times)).flatMap { $0 }, repeats: .once)
        }
    }

    /// N blinks of 200 ms on / 300 ms off, then a 1500 ms pause (1800 ms of dark
    /// in all): slow enough to count, the pause long enough to see where a count starts.
    public static func errorCycle(_ code: LEDErrorCode, repeats: LEDPattern.Repeat) -> LEDPattern {
        var steps: [LEDPattern.Step] = []
        for _ in 0..<code.rawValue { steps += [.on(200), .off(300)] }
        steps.append(.off(1500))
        return LEDPattern(steps, repeats: repeats)
    }
}
