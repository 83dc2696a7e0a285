// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import CShutterSys
import ShutterCore

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

    /// adjtimex with modes 0 only reads; it returns TIME_ERROR while the
    /// kernel's STA_UNSYNC is set, i.e. until an NTP daemon (chrony, timesyncd)
    /// has disciplined the clock. Through CShutterSys: Glibc's Swift module
    /// lacks <sys/timex.h>.
    public func kernelSaysSynchronised() -> Bool {
        shutter_clock_synchronised() != 0
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
