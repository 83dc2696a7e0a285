// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterStorage

/// Which photos a time-lapse is made of: the card's photos (clips left out) from `from` to
/// `to`, both ends in, in the order of their numbers (the order they were taken: numbers
/// are never reused, while the wall clock may have jumped). A time compares with a photo's
/// modification time (the moment it was written, as `shutterctl files` lists it); a time
/// without an offset is the camera's local time (its time zone, daylight saving included).
struct TimelapseRange: Sendable, Equatable {
    var from: TimelapseBound?
    var to: TimelapseBound?

    /// The photos of `items` in the range, oldest number first.
    func photos(_ items: [MediaItem]) -> [MediaItem] {
        items.filter { $0.kind == .photo && includes($0) }.sorted { $0.number < $1.number }
    }

    private func includes(_ item: MediaItem) -> Bool {
        switch from {
        case .number(let n)?: if item.number.webNumber < n { return false }
        case .time(let m)?: if item.modified < Self.seconds(m) { return false }
        case nil: break
        }
        switch to {
        case .number(let n)?: if item.number.webNumber > n { return false }
        case .time(let m)?: if item.modified >= Self.seconds(m) + Double(m.span) { return false }
        case nil: break
        }
        return true
    }

    /// The moment as seconds since the epoch: with its offset when it has one, else in the
    /// process's time zone (`mktime`, which knows the zone's daylight saving).
    static func seconds(_ m: TimelapseBound.Moment) -> Double {
        var t = tm()
        t.tm_year = Int32(m.year - 1900)
        t.tm_mon = Int32(m.month - 1)
        t.tm_mday = Int32(m.day)
        t.tm_hour = Int32(m.hour)
        t.tm_min = Int32(m.minute)
        t.tm_sec = Int32(m.second)
        if let offset = m.utcOffsetSeconds { return Double(timegm(&t)) - Double(offset) }
        t.tm_isdst = -1
        return Double(mktime(&t))
    }

    /// The range in words, for "no photos from … to …".
    var text: String {
        func word(_ b: TimelapseBound?) -> String? {
            switch b {
            case .number(let n)?: return String(n)
            case .time(let m)?:
                func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
                var s = "\(m.year)-\(two(m.month))-\(two(m.day))"
                if m.span < 86_400 { s += "T\(two(m.hour)):\(two(m.minute))" }
                if m.span < 60 { s += ":\(two(m.second))" }
                return s
            case nil: return nil
            }
        }
        switch (word(from), word(to)) {
        case (nil, nil): return "on the card"
        case let (f?, nil): return "from \(f) on"
        case let (nil, t?): return "up to \(t)"
        case let (f?, t?): return "from \(f) to \(t)"
        }
    }
}
