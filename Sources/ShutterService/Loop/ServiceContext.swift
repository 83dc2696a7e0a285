// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterMedia
import ShutterStorage

/// What every part of the loop reads and nobody changes: the configuration,
/// the board, the clock, the card, the supervisor's hooks.
struct ServiceContext: Sendable {
    let config: ShutterConfig
    let roles: BoardRoles
    let clock: any MonotonicClock
    let wallClock: any WallClock
    let storage: Storage
    let hooks: ServiceHooks
    let log: Log
    let startedAt: MonotonicTime
    /// Where the loop tells live watchers what happened (LiveReport); the web page
    /// and the control socket hand it to theirs.
    var live = LiveEvents()
    /// The live video's packets and viewers (Live/LiveVideo.swift); nil when none is served.
    var video: LiveVideo? = nil
    /// The time stamp drawn into photos and clips (Overlay/OverlaySetup.swift); nil when off.
    var overlay: TextOverlay? = nil
    /// The service's work in flight, its one count (ShutterCore's `InFlight`): jobs and
    /// the loop hold `WorkToken`s, the queues and encoder threads count their blocks and
    /// items. Nothing in the service reads it: a test on a manual clock waits for it to be
    /// none before the clock moves on (InProcessRig).
    var work = InFlight()

    var now: MonotonicTime { clock.now() }
}

/// What happened last, for `status` and refusals: the last error, the last
/// files, the error count.
struct Journal {
    var lastError: String?
    var lastFiles: [String] = []
    var errors = 0
    var refusedPresses = 0
    /// The uploader's last report (`status.upload`).
    var upload: UploadReport?

    mutating func error(_ message: String) {
        errors += 1
        lastError = message
    }
}
