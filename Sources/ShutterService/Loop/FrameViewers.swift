// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// Who looks at the video frames besides the clip: the web page's preview and each
/// clip's poster frame (`Web/PreviewFrames.swift`). A role, so the loop knows nothing
/// of the web page: ShutterWeb is imported only in `Web/`, the page's setup.
protocol FrameViewers: AnyObject, Sendable {
    /// Every video frame; returns at once (a frame not wanted or not taken is skipped).
    func offer(_ frame: Frame, now: MonotonicTime, recording clip: CaptureID?)
    /// The saved clip's poster frame beside its first file (called off the loop).
    func savePoster(for clip: CaptureID, beside path: String)
    /// Preview frames encoded and skipped so far, for `status`.
    var figures: (encoded: Int, skipped: Int) { get }
}
