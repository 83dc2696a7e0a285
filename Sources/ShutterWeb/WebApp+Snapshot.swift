// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

extension WebApp {
    /// `GET /api/snapshot.jpg`: the newest video frame as a JPEG at the preview's size
    /// (SnapshotCache). No file is saved and no capture state is touched: it is the
    /// preview's encoder on the preview's frames.
    func snapshot() -> WebResponse {
        guard let feed = backend.preview else { return .error(404, "no live preview on this service, so no snapshot") }
        guard let jpeg = feed.snapshots.take() else {
            return WebResponse.error(503, "no video frame within \(Int(SnapshotCache.waitSeconds)) s: is the camera running? "
                                     + "(GET /api/status says)").with(header: ("Retry-After", "1"))
        }
        return WebResponse(status: 200, contentType: "image/jpeg", body: .bytes(jpeg), headers: [("Cache-Control", "no-store")])
    }
}
