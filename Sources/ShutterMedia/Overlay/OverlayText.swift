// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

/// The words of a stamp: the name, then the time as `overlay.format` writes it in local time.
public enum OverlayText {
    /// `localSeconds`: seconds since the epoch plus the UTC offset in force (local time);
    /// nil: the clock is not trusted, so no time (the name alone, if any).
    public static func text(format: String, name: String, localSeconds: Int64?, utcOffsetSeconds: Int32) -> String {
        var time = ""
        if let localSeconds {
            var t = time_t(localSeconds)
            var parts = tm()
            gmtime_r(&t, &parts)
            parts.tm_gmtoff = Int(utcOffsetSeconds)  // %z
            var buf = [CChar](repeating: 0, count: 256)
            let n = strftime(&buf, buf.count, format, &parts)
            time = String(decoding: buf.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return [name, time].filter { !$0.isEmpty }.joined(separator: "  ")
    }
}
