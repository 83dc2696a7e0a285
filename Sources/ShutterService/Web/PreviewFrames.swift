// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ShutterCore
import ShutterMedia
import ShutterStorage
import ShutterWeb
import Synchronization

/// Small JPEGs from the video frames, off the service's actor: the web page's live
/// preview (~640 px, at most 5 per second, only while someone watches) and each
/// clip's poster frame, saved beside it as a DCF `.THM` when the clip is saved.
/// A frame is handed over only when the preview thread is idle and one is due;
/// otherwise it is skipped (and counted): the recorder never waits for it.
final class PreviewFrames: FrameViewers, Sendable {
    static let previewInterval = Duration.milliseconds(200)
    static let previewSide = 640
    static let posterSide = 160

    let feed: PreviewFeed
    private let encoder: PreviewEncoder
    private let queue = DispatchQueue(label: "shutter.preview", qos: .utility)
    private let log = Log("shutter.preview")
    private struct State {
        var busy = false
        var lastPreview: MonotonicTime?
        /// Each recording's poster, kept by its capture until the clip is saved: frames go on
        /// (with no recording) while a clip is being finalised.
        var posters: [CaptureID: [UInt8]] = [:]
        var encoded = 0
        var skipped = 0
    }
    private let state = Mutex(State())

    init?(feed: PreviewFeed) {
        guard let e = try? PreviewEncoder() else { return nil }
        self.feed = feed
        encoder = e
    }

    /// Called for every video frame; returns at once.
    func offer(_ frame: Frame, now: MonotonicTime, recording clip: CaptureID?) {
        let watched = feed.watched
        let work = state.withLock { s -> (poster: Bool, preview: Bool)? in
            let wantPoster = clip.map { s.posters[$0] == nil } ?? false
            // A snapshot waiting (GET /api/snapshot.jpg) takes the next frame, whatever the interval.
            let previewDue = (watched && (s.lastPreview.map { now >= $0 + Self.previewInterval } ?? true)) || feed.snapshots.wanted
            guard wantPoster || previewDue else { return nil }
            guard !s.busy else {
                if previewDue { s.skipped += 1 }
                return nil
            }
            s.busy = true
            if previewDue { s.lastPreview = now }
            return (wantPoster, previewDue)
        }
        guard let (wantPoster, previewDue) = work else { return }
        queue.async { [self] in
            var posterJPEG: [UInt8]?
            if wantPoster { posterJPEG = try? encoder.encode(frame, maxSide: Self.posterSide, quality: 80) }
            var previewJPEG: [UInt8]?
            if previewDue { previewJPEG = try? encoder.encode(frame, maxSide: Self.previewSide) }
            state.withLock { s in
                if let posterJPEG, let clip {
                    s.posters[clip] = posterJPEG
                    // A clip that failed never asks for its poster: a few at most are kept.
                    while s.posters.count > 4, let oldest = s.posters.keys.min(by: { $0.value < $1.value }) { s.posters[oldest] = nil }
                }
                if previewJPEG != nil { s.encoded += 1 }
                s.busy = false
            }
            if let previewJPEG {
                let jpeg = Data(previewJPEG)
                feed.publish(jpeg: jpeg)
                feed.snapshots.publish(jpeg: jpeg)
            }
        }
    }

    /// The saved clip's poster frame as `SHTRnnnn.THM` beside its (first) file.
    func savePoster(for clip: CaptureID, beside path: String) {
        let jpeg = state.withLock { $0.posters.removeValue(forKey: clip) }
        guard let jpeg else { return }
        let thm = (PlainIO.deletingPathExtension(path)) + ".THM"
        do {
            try Data(jpeg).write(to: URL(fileURLWithPath: thm), options: .atomic)
        } catch {
            log.warning("no poster frame for \(path): \(PlainIO.reason(error))")
        }
    }

    /// (encoded, skipped) preview frames so far.
    var figures: (encoded: Int, skipped: Int) {
        state.withLock { ($0.encoded, $0.skipped) }
    }
}
