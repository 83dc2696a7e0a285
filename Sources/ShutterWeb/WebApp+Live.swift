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

extension WebApp {
    /// The live H.264 as fragmented MP4 for the page's Media Source (or any player that
    /// reads fMP4 over HTTP); 404 when the service has no live video.
    func liveVideo() -> WebResponse {
        guard let feed = backend.live else { return .error(404, "no live video") }
        guard let viewer = feed.join() else {
            return .error(503, "too many live viewers (at most \(feed.maxViewers)); close one")
        }
        keep(viewer, viewer.life)
        return WebResponse(status: 200, contentType: "video/mp4", body: .stream(viewer),
                           headers: [("Cache-Control", "no-store")])
    }
}
