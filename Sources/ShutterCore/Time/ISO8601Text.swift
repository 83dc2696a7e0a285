// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// UTC times as ISO 8601 text ("2026-12-03T06:30:52Z"), as Foundation's
/// ISO8601DateFormatter writes them by default (rounded to the millisecond, then whole
/// seconds: .75 s is dropped, .9996 s counts up), from gmtime_r: no Foundation (tested
/// against the formatter).
public enum ISO8601Text {
    /// `secondsSinceEpoch` (seconds since 1970 UTC) as "YYYY-MM-DDTHH:MM:SSZ".
    public static func utc(_ secondsSinceEpoch: Double) -> String {
        guard secondsSinceEpoch.isFinite, abs(secondsSinceEpoch) < 1e15 else { return "" }
        let ms = (secondsSinceEpoch * 1000 + 0.5).rounded(.down)
        var secs = time_t((ms / 1000).rounded(.down))
        var tm = tm()
        guard gmtime_r(&secs, &tm) != nil else { return "" }
        return cFormat("%04d-%02d-%02dT%02d:%02d:%02dZ", Int(tm.tm_year) + 1900, Int(tm.tm_mon) + 1,
                       Int(tm.tm_mday), Int(tm.tm_hour), Int(tm.tm_min), Int(tm.tm_sec))
    }

    /// Local time as "YYYY-MM-DDTHH:MM:SS+01:00": `secondsSinceEpoch` (UTC) shown with
    /// `utcOffsetSeconds` (the offset the wall clock reported).
    public static func local(_ secondsSinceEpoch: Int64, utcOffsetSeconds: Int32) -> String {
        let utc = Self.utc(Double(secondsSinceEpoch + Int64(utcOffsetSeconds)))
        guard utc.hasSuffix("Z") else { return utc }
        let off = Int(utcOffsetSeconds), a = abs(off)
        return String(utc.dropLast()) + (off < 0 ? "-" : "+") + cFormat("%02d:%02d", a / 3600, a % 3600 / 60)
    }
}
