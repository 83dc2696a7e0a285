#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A wall-clock instant with the local UTC offset in force at that instant, and
/// whether the clock was believed at all. Wall time only names files and dates
/// EXIF; everything that measures time uses `MonotonicTime`.
public struct WallTime: Sendable, Equatable {
    public var secondsSinceEpoch: Int64
    /// 0 ..< 1_000_000_000.
    public var nanoseconds: Int32
    /// Local time minus UTC, in seconds (e.g. +3600 for CET).
    public var utcOffsetSeconds: Int32
    /// False when nothing vouches for the clock (no RTC, no time sync yet):
    /// then dates must be omitted rather than written as 1970 or a stale boot time.
    public var isTrusted: Bool

    public init(secondsSinceEpoch: Int64, nanoseconds: Int32 = 0, utcOffsetSeconds: Int32 = 0,
                isTrusted: Bool) {
        self.secondsSinceEpoch = secondsSinceEpoch
        self.nanoseconds = nanoseconds
        self.utcOffsetSeconds = utcOffsetSeconds
        self.isTrusted = isTrusted
    }

    /// This instant moved by a (possibly negative) duration; offset and trust kept.
    public func adding(_ d: Duration) -> WallTime {
        let total = Int64(nanoseconds) + d.nanoseconds
        var s = secondsSinceEpoch + total / 1_000_000_000
        var ns = total % 1_000_000_000
        if ns < 0 { ns += 1_000_000_000; s -= 1 }
        return WallTime(secondsSinceEpoch: s, nanoseconds: Int32(ns), utcOffsetSeconds: utcOffsetSeconds,
                        isTrusted: isTrusted)
    }
}

/// Source of wall time. Injected so tests can pose as a synchronised or an
/// unsynchronised clock.
public protocol WallClock: Sendable {
    func now() -> WallTime
}

extension WallClock {
    public var isTrusted: Bool { now().isTrusted }

    /// The wall time of a point on the monotonic timeline (e.g. a frame's sensor
    /// timestamp), by reading both clocks now and stepping back.
    public func wallTime(at t: MonotonicTime, monotonic: some MonotonicClock) -> WallTime {
        let wall = now()
        return wall.adding(t - monotonic.now())
    }
}

/// CLOCK_REALTIME with a trust verdict. A Pi without a battery-backed RTC boots
/// at the last saved time (or 1970) until NTP syncs, so trust needs evidence:
/// the kernel's NTP status says synchronised, or systemd-timesyncd's flag file
/// exists, or the kernel set the time from an RTC at boot. And never trust a
/// time before `earliestPlausible` (the year this software was written).
public struct SystemWallClock: WallClock {
    public var timesyncFlagPath: String
    public var rtcHctosysPath: String
    public var earliestPlausible: Int64

    public init(timesyncFlagPath: String = "/run/systemd/timesync/synchronized",
                rtcHctosysPath: String = "/sys/class/rtc/rtc0/hctosys",
                earliestPlausible: Int64 = 1_735_689_600 /* 2025-01-01T00:00:00Z */) {
        self.timesyncFlagPath = timesyncFlagPath
        self.rtcHctosysPath = rtcHctosysPath
        self.earliestPlausible = earliestPlausible
    }

    public func now() -> WallTime {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var t = ts.tv_sec
        var local = tm()
        localtime_r(&t, &local)
        let secs = Int64(ts.tv_sec)
        let trusted = secs >= earliestPlausible && (kernelSaysSynchronised() || exists(timesyncFlagPath)
                                                    || rtcSetTheClock())
        return WallTime(secondsSinceEpoch: secs, nanoseconds: Int32(ts.tv_nsec),
                        utcOffsetSeconds: Int32(local.tm_gmtoff), isTrusted: trusted)
    }

    /// adjtimex with modes 0 only reads; it returns TIME_ERROR (5) while the
    /// kernel's STA_UNSYNC is set, i.e. until an NTP daemon (chrony, timesyncd)
    /// has disciplined the clock. Glibc's Swift module lacks <sys/timex.h> and
    /// ShutterCore imports no C module, so the symbol is looked up at run time;
    /// only the return value is read, so the struct layout (which differs on
    /// 32-bit boards) does not matter: a zeroed, oversized buffer stands in for it.
    public func kernelSaysSynchronised() -> Bool {
        typealias Adjtimex = @convention(c) (UnsafeMutableRawPointer) -> Int32
        guard let sym = dlsym(nil, "adjtimex") else { return false }
        let adjtimex = unsafeBitCast(sym, to: Adjtimex.self)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 512, alignment: 16)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: 512)
        let state = adjtimex(buffer)
        let timeError: Int32 = 5
        return state >= 0 && state != timeError
    }

    private func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// "1" when the kernel loaded the system time from this RTC at boot. A bare
    /// /dev/rtc0 is not enough: the Pi 5 has one without a battery.
    private func rtcSetTheClock() -> Bool {
        let fd = open(rtcHctosysPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var c: UInt8 = 0
        return read(fd, &c, 1) == 1 && c == UInt8(ascii: "1")
    }
}

/// A wall clock that says what the test tells it.
public struct FixedWallClock: WallClock {
    public var time: WallTime
    public init(_ time: WallTime) { self.time = time }
    public func now() -> WallTime { time }
}
