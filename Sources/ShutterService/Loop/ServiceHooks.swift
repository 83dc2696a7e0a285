import ShutterCore

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
    public var powerOff: @Sendable () -> Void
    /// EXTEND_TIMEOUT_USEC: stopping takes longer (a long clip is being finalised).
    public var extendTimeout: @Sendable (Duration) -> Void

    public init(ready: @escaping @Sendable (String) -> Void = { _ in },
                status: @escaping @Sendable (String) -> Void = { _ in },
                watchdogPing: @escaping @Sendable () -> Void = {},
                stopping: @escaping @Sendable () -> Void = {},
                powerOff: @escaping @Sendable () -> Void = {},
                extendTimeout: @escaping @Sendable (Duration) -> Void = { _ in }) {
        self.ready = ready
        self.status = status
        self.watchdogPing = watchdogPing
        self.stopping = stopping
        self.powerOff = powerOff
        self.extendTimeout = extendTimeout
    }
}
