// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterMedia

/// The time stamp's wiring at start (docs/overlay.md): the font opened once, or a
/// configuration error naming `overlay.font` (shutterd exits 78), so a missing font is
/// seen at start rather than as photos without their stamp.
///
/// Where it is drawn, once per consumer that keeps pixels, never into the camera's buffer
/// (libcamera maps it read-only; the photo, the clip encoder, metering and the page's
/// preview read the same frame at once): the clip, pre-roll and live encoders blend it into
/// the copy each makes of a frame, on their own thread (`RecordingQueue.pop`), and a photo
/// into a copy of the stamp's rows only (`StillEncoder`, on the photo queue). Frames no one keeps (metering, the preview) are not stamped.
enum OverlaySetup {
    static func make(config: ShutterConfig, clock: any MonotonicClock, wallClock: any WallClock,
                     work: InFlight? = nil) throws(OverlayError) -> TextOverlay? {
        let c = config.overlay
        guard c.enabled else { return nil }
        let font: OverlayFont
        do {
            font = try OverlayFont(path: c.font)
        } catch {
            throw OverlayError(message: "overlay.font is \"\(c.font)\": \(error.message); install Debian's "
                               + "fonts-dejavu-core, name another TrueType or OpenType file, or set overlay.enabled false")
        }
        let overlay = TextOverlay(style: TextOverlay.Style(c), font: font, clock: clock, wallClock: wallClock, work: work)
        Log("shutter.overlay").notice("time stamp on: \"\(c.format)\"\(c.name.isEmpty ? "" : " after \"\(c.name)\""), "
                                      + "\(c.position.rawValue), \(c.size)% of the picture's height, font \(c.font)")
        return overlay
    }
}
