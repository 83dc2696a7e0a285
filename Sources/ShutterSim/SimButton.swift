// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import Synchronization

/// The simulated shutter button: edges come from the terminal or the control
/// socket, stamped on CLOCK_MONOTONIC like the kernel's GPIO edge timestamps.
public final class SimButton: ButtonInput {
    private struct State {
        var pressed = false
        var continuation: AsyncStream<ButtonEvent>.Continuation?
        var pending: [ButtonEdge] = []
    }

    private let clock: any MonotonicClock
    private let state = Mutex(State())

    public init(clock: any MonotonicClock = SystemClock()) {
        self.clock = clock
    }

    public func events() -> AsyncStream<ButtonEvent> {
        let (stream, continuation) = AsyncStream<ButtonEvent>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let pending: [ButtonEdge] = state.withLock { s in
            s.continuation?.finish()
            s.continuation = continuation
            defer { s.pending = [] }
            return s.pending
        }
        for e in pending { continuation.yield(.edge(e)) }
        return stream
    }

    public var isPressed: Bool { state.withLock { $0.pressed } }

    /// Sets the level; a repeat of the current level is ignored. Yields under the lock,
    /// so an edge and a sample reach the stream in the order they were dated.
    public func set(pressed: Bool) {
        state.withLock { s in
            guard s.pressed != pressed else { return }
            s.pressed = pressed
            let edge = ButtonEdge(pressed: pressed, time: clock.now())
            if let c = s.continuation { c.yield(.edge(edge)) } else { s.pending.append(edge) }
        }
    }

    /// Caught up at once: the sim's edges are yielded as they happen.
    public func catchUp() {
        state.withLock { s in
            _ = s.continuation?.yield(.caughtUp(clock.now()))
        }
    }

    public func press() { set(pressed: true) }
    public func release() { set(pressed: false) }
    public func toggle() { set(pressed: !isPressed) }
}
