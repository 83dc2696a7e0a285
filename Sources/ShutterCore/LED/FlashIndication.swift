// SPDX-License-Identifier: BSD-2-Clause
/// What the flash LED should do outside the still capture itself (the stills
/// role fires the flash around the exposure when `takePhoto(flash: true)`).
public enum FlashIndication: Equatable, Sendable {
    case off
    /// Steady light during a recording.
    case torch
    /// One-shot: shows the mode a double tap selected: off = one short pulse,
    /// auto = two short pulses, on = a 600 ms glow.
    case mode(FlashMode)
    /// One-shot: a flash pulse of `duration` (for a still taken without the stills role's help).
    case fire(Duration)
    /// Lit for a `focused` still's exposure, until the still is in hand (then `.off`).
    case still

    public var origin: MonotonicTime? { nil }

    public var pattern: LEDPattern {
        switch self {
        case .off: return .off
        case .torch, .still: return .steady(true)
        case .mode(.off): return LEDPattern([.on(50), .off(150)], repeats: .once)
        case .mode(.auto): return LEDPattern([.on(50), .off(150), .on(50), .off(150)], repeats: .once)
        case .mode(.on): return LEDPattern([.on(600), .off(150)], repeats: .once)
        case .fire(let d): return LEDPattern([LEDPattern.Step(on: true, duration: d)], repeats: .once)
        }
    }
}
