// SPDX-License-Identifier: BSD-2-Clause
import ShutterService
import Synchronization

/// A `PowerOff` that only records that it was asked: the shutdown-gesture tests
/// check that power-off is asked for exactly once, after the clip is finalised
/// (`onCall` runs at the moment of the call, to look at the files then).
final class RecordingPowerOff: PowerOff {
    private struct State {
        var calls = 0
    }

    private let state = Mutex(State())
    private let failure: PowerOffError?
    private let onCall: @Sendable () -> Void

    /// - Parameters:
    ///   - failure: thrown by every call (to test a refused power-off); nil = accepted.
    ///   - onCall: runs on each call, before it returns.
    init(failure: PowerOffError? = nil, onCall: @escaping @Sendable () -> Void = {}) {
        self.failure = failure
        self.onCall = onCall
    }

    /// How many times power-off was asked for.
    var callCount: Int {
        state.withLock { $0.calls }
    }

    func powerOff() async throws(PowerOffError) {
        state.withLock { $0.calls += 1 }
        onCall()
        if let failure { throw failure }
    }

    /// Waits until at least `count` calls were made, or `timeout` passes; true if they were.
    func waitForCalls(_ count: Int = 1, timeout: Duration) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while callCount < count {
            guard clock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }
}
