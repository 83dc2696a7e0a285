import ShutterCore
import Synchronization

/// The simulated shutter button: edges come from the terminal or the control
/// socket, stamped on CLOCK_MONOTONIC like the kernel's GPIO edge timestamps.
public final class SimButton: ButtonInput {
    private struct State {
        var pressed = false
        var continuation: AsyncStream<ButtonEdge>.Continuation?
        var pending: [ButtonEdge] = []
    }

    private let clock: any MonotonicClock
    private let state = Mutex(State())

    public init(clock: any MonotonicClock = SystemClock()) {
        self.clock = clock
    }

    public func edges() -> AsyncStream<ButtonEdge> {
        let (stream, continuation) = AsyncStream<ButtonEdge>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let pending: [ButtonEdge] = state.withLock { s in
            s.continuation?.finish()
            s.continuation = continuation
            defer { s.pending = [] }
            return s.pending
        }
        for e in pending { continuation.yield(e) }
        return stream
    }

    public var isPressed: Bool { state.withLock { $0.pressed } }

    /// Sets the level; a repeat of the current level is ignored.
    public func set(pressed: Bool) {
        let edge = ButtonEdge(pressed: pressed, time: clock.now())
        let c: AsyncStream<ButtonEdge>.Continuation?? = state.withLock { s in
            guard s.pressed != pressed else { return .none }
            s.pressed = pressed
            if s.continuation == nil { s.pending.append(edge) }
            return .some(s.continuation)
        }
        if case let .some(.some(c)) = c { c.yield(edge) }
    }

    public func press() { set(pressed: true) }
    public func release() { set(pressed: false) }
    public func toggle() { set(pressed: !isPressed) }
}
