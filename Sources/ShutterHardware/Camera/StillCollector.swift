// SPDX-License-Identifier: BSD-2-Clause
import Dispatch
import ShutterCore
import Synchronization

/// Receives frames while the camera is in its still configuration: skips the
/// warm-up frames (AE/AWB settle after the switch), keeps the next one and
/// wakes the waiting control queue.
final class StillCollector: Sendable {
    private struct Slot {
        var skip: Int
        var frame: Frame?
        var done = false
    }

    private let slot: Mutex<Slot>
    private let ready = DispatchSemaphore(value: 0)

    init(warmupFrames: Int) {
        slot = Mutex(Slot(skip: max(0, warmupFrames)))
    }

    /// Pump side. A skipped frame is released as soon as the caller drops it.
    func offer(_ frame: Frame) {
        let wake: Bool = slot.withLock { s in
            if s.done { return false }
            if s.skip > 0 {
                s.skip -= 1
                return false
            }
            s.frame = frame
            s.done = true
            return true
        }
        if wake { ready.signal() }
    }

    /// Ends the wait without a frame (disconnect).
    func abandon() {
        let wake: Bool = slot.withLock { s in
            if s.done { return false }
            s.done = true
            return true
        }
        if wake { ready.signal() }
    }

    /// Blocks the calling (dedicated) queue until a frame arrives or `timeout` passes.
    func wait(timeout: Duration) -> Frame? {
        let ns = max(0, Int(timeout.nanoseconds))
        _ = ready.wait(timeout: .now() + .nanoseconds(ns))
        return slot.withLock { s in
            s.done = true
            let f = s.frame
            s.frame = nil
            return f
        }
    }
}
