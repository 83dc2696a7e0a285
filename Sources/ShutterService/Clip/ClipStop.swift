// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import Synchronization

/// A clip's one stop time (the release, a stop request, the max, a stalled encoder):
/// set once by the loop (`ClipSession.stop`), read there and by the recorder's queue and
/// encoder threads, which record nothing after it. One object, so the loop and the
/// recorder never hold two copies of it.
final class ClipStop: Sendable {
    private let time = Mutex<MonotonicTime?>(nil)

    init() {}

    /// Nil while the clip goes on.
    var at: MonotonicTime? { time.withLock { $0 } }

    /// The first stop wins: later ones (a max after the release) change nothing.
    func set(_ t: MonotonicTime) { time.withLock { if $0 == nil { $0 = t } } }
}
