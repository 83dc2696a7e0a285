// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import Synchronization

/// The simulated shutter button: edges come from the terminal or the control
/// socket, stamped on CLOCK_MONOTONIC like the kernel's GPIO edge timestamps.
public final class SimButton: ButtonInput {
    private struct State {
        var pressed = false
        var sink: ButtonSink?
        var pending: [ButtonEdge] = []
    }

    private let clock: any MonotonicClock
    private let state = Mutex(State())

    public init(clock: any MonotonicClock = SystemClock()) {
        self.clock = clock
    }

    /// Edges made before a sink was given are delivered to it first.
    public func deliver(to sink: @escaping ButtonSink) {
        state.withLock { s in
            s.sink = sink
            for e in s.pending { _ = sink(.edge(e)) }
            s.pending = []
        }
    }

    public var isPressed: Bool { state.withLock { $0.pressed } }

    /// Sets the level; a repeat of the current level is ignored. Delivered under the lock,
    /// so an edge and a sample reach the sink in the order they were dated.
    public func set(pressed: Bool) {
        state.withLock { s in
            guard s.pressed != pressed else { return }
            s.pressed = pressed
            let edge = ButtonEdge(pressed: pressed, time: clock.now())
            if let sink = s.sink { _ = sink(.edge(edge)) } else { s.pending.append(edge) }
        }
    }

    /// Its edges are delivered as they happen (under the lock that dates them).
    public var allEdgesDelivered: Bool { true }

    /// Caught up at once: the sim's edges are delivered as they happen.
    public func catchUp() {
        state.withLock { s in
            _ = s.sink?(.caughtUp(clock.now()))
        }
    }

    public func press() { set(pressed: true) }
    public func release() { set(pressed: false) }
    public func toggle() { set(pressed: !isPressed) }
}
