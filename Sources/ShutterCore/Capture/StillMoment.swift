// SPDX-License-Identifier: BSD-2-Clause
/// Which frame a photo is (`still.moment`, docs/control-and-api.md "The moment of the press").
public enum StillMoment: String, Codable, Sendable, CaseIterable {
    /// The frame whose exposure started closest to the press, kept from the
    /// running stream: no mode switch, no autofocus wait, no gap in the video.
    /// From the still stream where the camera grants one alongside video, else
    /// the video frame.
    case press
    /// Today's full-resolution still: an autofocus cycle from the press, then a
    /// mode switch after the release (video stops meanwhile). Also what a
    /// `press` photo becomes when the flash is to fire: a flash cannot light an
    /// exposure that already happened.
    case focused
}
