// SPDX-License-Identifier: BSD-2-Clause
/// The time stamp in the picture as `status.overlay` shows it (docs/overlay.md).
public struct OverlayReport: Codable, Equatable, Sendable {
    /// The time is drawn (the wall clock is trusted); false: the name alone, if set, until it
    /// is; null before the first frame was stamped.
    public var timeDrawn: Bool?
    /// Seconds' stamps rendered ahead of their frames (on the overlay's queue).
    public var renderedAhead: Int
    /// Stamps a frame's own thread had to render (the first frame, a clock jump).
    public var renderedOnMiss: Int

    public init(timeDrawn: Bool?, renderedAhead: Int, renderedOnMiss: Int) {
        self.timeDrawn = timeDrawn
        self.renderedAhead = renderedAhead
        self.renderedOnMiss = renderedOnMiss
    }
}
