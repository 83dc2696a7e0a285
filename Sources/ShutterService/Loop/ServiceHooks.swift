// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterMedia
import ShutterStorage

/// How the service talks to its supervisor (systemd) and what it does at power
/// off. Injected, so tests record the calls instead of powering anything off.
public struct ServiceHooks: Sendable {
    /// READY=1 with a STATUS line.
    public var ready: @Sendable (String) -> Void
    /// STATUS= line changes ("ready, 12 photos, 3 clips, 14.2 GB free").
    public var status: @Sendable (String) -> Void
    /// WATCHDOG=1: only while frames arrive and storage is writable.
    public var watchdogPing: @Sendable () -> Void
    /// STOPPING=1.
    public var stopping: @Sendable () -> Void
    /// The shutdown gesture completed and every file is finalised and synced.
    /// Runs as a job of the loop: the service exits once it returns.
    public var powerOff: @Sendable () async -> Void
    /// EXTEND_TIMEOUT_USEC: stopping takes longer (a long clip is being finalised).
    public var extendTimeout: @Sendable (Duration) -> Void
    /// Stopping took longer than its bound and work is still running (a write hung on
    /// a dead card); the parts are stopped already. The daemon's exits with the code at
    /// once (`exit`); one that returns (an in-process test's, which records the call) lets
    /// the service wait for the work. No default: whoever builds the hooks says which.
    public var exitWithoutWaiting: @Sendable (Int32) -> Void
    /// A clip's finish (RegularMP4) reached `step`, on the finisher's queue. Nothing in
    /// the service; `shutterd --debug-stall-finish STEP` stops the finish there for ever,
    /// so that a test can kill the process (or cut the power) inside it.
    public var finishReached: @Sendable (RegularMP4.Step) -> Void
    /// How the service's storage syncs the card (`Storage.cardSync`): the daemon's holds
    /// nothing; a test's may hold each sync, to stand in for a card whose syncs hang.
    public var cardSync: CardSync
    /// A time-lapse film has handled `done` photos, on its thread. Nothing in the service; a
    /// test may hold the film there (giving the work's count back while it holds it).
    public var timelapsePhoto: @Sendable (_ done: Int, _ work: InFlight) -> Void = { _, _ in }

    public init(ready: @escaping @Sendable (String) -> Void = { _ in },
                status: @escaping @Sendable (String) -> Void = { _ in },
                watchdogPing: @escaping @Sendable () -> Void = {},
                stopping: @escaping @Sendable () -> Void = {},
                powerOff: @escaping @Sendable () async -> Void = {},
                extendTimeout: @escaping @Sendable (Duration) -> Void = { _ in },
                finishReached: @escaping @Sendable (RegularMP4.Step) -> Void = { _ in },
                cardSync: CardSync = CardSync(),
                exitWithoutWaiting: @escaping @Sendable (Int32) -> Void) {
        self.ready = ready
        self.status = status
        self.watchdogPing = watchdogPing
        self.stopping = stopping
        self.powerOff = powerOff
        self.extendTimeout = extendTimeout
        self.finishReached = finishReached
        self.cardSync = cardSync
        self.exitWithoutWaiting = exitWithoutWaiting
    }
}
