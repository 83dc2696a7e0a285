// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import Synchronization

/// A simulated LED: remembers its level and when it last changed, so the
/// terminal can draw it and tests can read it over the control socket.
public final class SimLED: LEDOutput {
    public let name: String
    private struct State {
        var on = false
        var changes = 0
        var failing = false
    }

    private let state = Mutex(State())

    public init(name: String) { self.name = name }

    public func set(_ on: Bool) throws {
        try state.withLock { s in
            if s.failing { throw CameraError(.system, "simulated LED \(name) write failed (fault injected)") }
            if s.on != on { s.changes += 1 }
            s.on = on
        }
    }

    /// The level last written successfully (a failed write leaves it as it was).
    public var isOn: Bool { state.withLock { $0.on } }
    /// Number of level changes so far (a blink counts twice).
    public var changes: Int { state.withLock { $0.changes } }
    /// Makes every write fail, to check that LED failures never stop the camera.
    public var failing: Bool {
        get { state.withLock { $0.failing } }
        set { state.withLock { $0.failing = newValue } }
    }
}
