// SPDX-License-Identifier: BSD-2-Clause
/// What `overlay.format` may hold: strftime(3) conversions of the date and time, checked
/// when the configuration is read so a typo is an error naming the key, not a stamp that
/// prints "%Q" on every photo.
public enum OverlayFormat {
    /// The longest format (the stamp is one line in a corner).
    public static let maxLength = 64
    /// The conversions allowed after "%" (with an optional E or O modifier): the date and
    /// time ones of C and POSIX. Not %Z (the zone's name is not known to the service; %z is).
    public static let conversions = Set("aAbBcCdDeFgGhHIjmMpRrStTuUVwWxXyYz%")

    /// Why the format cannot be used, or nil.
    public static func problem(_ format: String) -> String? {
        if format.count > maxLength { return "at most \(maxLength) characters" }
        if format.contains(where: { $0.isNewline }) { return "one line: no line breaks" }
        var chars = Array(format)[...]
        while let c = chars.popFirst() {
            guard c == "%" else { continue }
            if let m = chars.first, m == "E" || m == "O" { chars.removeFirst() }
            guard let conv = chars.popFirst() else { return "it ends in a lone \"%\" (write \"%%\" for a percent sign)" }
            if !conversions.contains(conv) {
                return "\"%\(conv)\" is not a date or time conversion of strftime(3) (allowed: "
                    + conversions.sorted().map { "%\($0)" }.joined(separator: " ") + ")"
            }
        }
        return nil
    }
}
