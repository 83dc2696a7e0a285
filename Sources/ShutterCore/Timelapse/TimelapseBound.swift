// SPDX-License-Identifier: BSD-2-Clause
/// One end of a time-lapse's range of photos (`shutterctl timelapse --from A --to B`): a
/// photo's number as `shutterctl files` lists it (1000120 = 100SHUTR/SHTR0120), or a time
/// the photos were taken, in the camera's local time unless an offset is given
/// ("2026-12-05", "2026-12-05T06:00", "2026-12-05 06:00:30", "2026-12-05T06:00Z",
/// "2026-12-05T06:00+01:00"). Pure: the service turns a local time into seconds with the
/// camera's time zone (`TimelapseRange`).
public enum TimelapseBound: Sendable, Equatable {
    case number(Int)
    case time(Moment)

    /// A time as written: its fields, how much of it was given, and its UTC offset if any.
    public struct Moment: Sendable, Equatable {
        public var year, month, day, hour, minute, second: Int
        /// The seconds the text spans (86400 for a date, 60 for HH:MM, 1 for HH:MM:SS):
        /// `--to 2026-12-05` takes in the whole day.
        public var span: Int
        /// Seconds east of UTC when the text says ("Z" = 0); nil: the camera's local time.
        public var utcOffsetSeconds: Int?

        public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0, span: Int,
                    utcOffsetSeconds: Int? = nil) {
            (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
            self.span = span
            self.utcOffsetSeconds = utcOffsetSeconds
        }
    }

    /// What `--from` and `--to` take, in words (errors, docs).
    public static let help = "a photo's number as `shutterctl files` lists it (1000120), or a time it was taken: "
        + "2026-12-05, 2026-12-05T06:00, 2026-12-05T06:00:30 (the camera's local time; add Z or +01:00 for another)"

    /// Reads `text`; nil when it is neither a number nor a time.
    public init?(_ text: String) {
        let t = text.trimmedSpaces
        if t.utf8.count == 7, t.utf8.allSatisfy({ (48...57).contains($0) }), let n = Int(t) {
            guard n / 10000 >= 100, n / 10000 <= 999, n % 10000 >= 1 else { return nil }
            self = .number(n)
            return
        }
        guard let m = Self.moment(Substring(t)) else { return nil }
        self = .time(m)
    }

    private static func moment(_ t: Substring) -> Moment? {
        // The date: YYYY-MM-DD.
        let b = Array(t.utf8)
        func digits(_ at: Int, _ n: Int) -> Int? {
            guard at + n <= b.count, b[at..<(at + n)].allSatisfy({ (48...57).contains($0) }) else { return nil }
            return b[at..<(at + n)].reduce(0) { $0 * 10 + Int($1 - 48) }
        }
        guard let y = digits(0, 4), b.count >= 10, b[4] == 45, let mo = digits(5, 2), b[7] == 45, let d = digits(8, 2),
              (1...12).contains(mo), (1...31).contains(d) else { return nil }
        var m = Moment(year: y, month: mo, day: d, span: 86_400)
        var i = 10
        if i < b.count, b[i] == 84 || b[i] == 32 {  // "T" or " "
            guard let h = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == 58, let mi = digits(i + 4, 2),
                  (0...23).contains(h), (0...59).contains(mi) else { return nil }
            (m.hour, m.minute, m.span) = (h, mi, 60)
            i += 6
            if i < b.count, b[i] == 58 {
                guard let s = digits(i + 1, 2), (0...59).contains(s) else { return nil }
                (m.second, m.span) = (s, 1)
                i += 3
            }
        }
        if i < b.count {
            if b[i] == 90 && i + 1 == b.count {  // "Z"
                m.utcOffsetSeconds = 0
            } else if b[i] == 43 || b[i] == 45, i + 6 == b.count, let oh = digits(i + 1, 2), b[i + 3] == 58,
                      let om = digits(i + 4, 2), oh <= 14, om <= 59 {
                m.utcOffsetSeconds = (b[i] == 45 ? -1 : 1) * (oh * 3600 + om * 60)
            } else {
                return nil
            }
        }
        return m
    }
}
