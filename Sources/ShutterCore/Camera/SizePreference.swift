// SPDX-License-Identifier: BSD-2-Clause
/// Which of an ordered list of sizes a camera granted: the first it grants
/// exactly wins, the list falls through on each size it adjusts or refuses.
public enum SizePreference {
    /// The entry (0-based) of `preferences` that `granted` is; nil when the
    /// camera granted none of them (it adjusted the last to what it can do).
    public static func entry(of granted: PixelSize, in preferences: [PixelSize]) -> Int? {
        preferences.firstIndex(of: granted)
    }

    /// What a camera that gives any size up to `largest` grants: the first
    /// preference that fits, else the last one shrunk to fit (keeping even sides),
    /// as libcamera's validate() adjusts it.
    public static func grant(_ preferences: [PixelSize], largest: PixelSize?) -> PixelSize {
        guard let last = preferences.last else { return largest ?? PixelSize(width: 640, height: 480) }
        guard let largest else { return preferences[0] }
        if let fit = preferences.first(where: { $0.fits(in: largest) }) { return fit }
        return PixelSize(width: min(last.width, largest.width) & ~1, height: min(last.height, largest.height) & ~1)
    }
}
