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
import ShutterControl
import ShutterCore
import ShutterMedia
import ShutterWeb
import Synchronization

/// The page's live H.264 as a live consumer: each `/api/live.mp4` viewer gets its own
/// fragmented MP4 (LiveMP4Muxer) from a keyframe on; a viewer behind skips to the next
/// keyframe.
final class LivePage: LiveConsumer, Sendable {
    let feed: LiveVideoFeed
    /// Each viewer's muxer. Held for a whole delivery, on LiveVideo's queue (the only
    /// one that takes it, so never waited for); nothing called under it comes back here.
    private let viewers = Mutex<[ObjectIdentifier: (viewer: LiveVideoViewer, muxer: LiveMP4Muxer?, needKey: Bool)]>([:])
    private let sent = Mutex(0)
    private let droppedGone = Mutex(0)

    init(feed: LiveVideoFeed) { self.feed = feed }

    var watched: Bool { feed.watched }

    func deliver(_ packet: EncodedPacket) {
        let open = feed.open
        let ids = Set(open.map(ObjectIdentifier.init))
        viewers.withLock { viewers in
            for (id, v) in viewers where !ids.contains(id) {
                droppedGone.withLock { $0 += v.viewer.framesDropped }
                viewers[id] = nil
            }
            for v in open {
                let id = ObjectIdentifier(v)
                var state = viewers[id] ?? (v, nil, true)
                if state.muxer?.source !== packet.source { state.muxer = nil; state.needKey = true }
                if state.needKey && !packet.isKey {
                    v.skip()
                    viewers[id] = state
                    continue
                }
                var bytes = Data()
                let fresh = state.muxer == nil
                if fresh {
                    guard let m = LiveMP4Muxer(source: packet.source) else { v.close(); continue }
                    state.muxer = m
                    bytes = m.header
                }
                bytes.append(state.muxer!.append(packet))
                state.needKey = !v.push(bytes)
                if state.needKey && fresh { state.muxer = nil }  // the init segment did not go out: start again
                if !state.needKey { sent.withLock { $0 += 1 } }
                viewers[id] = state
            }
        }
    }

    func deliver(_ audio: AudioChunk) {}  // the page's live video is video only
    func hear(sampleRate: Int, channels: Int) {}

    func figures(into c: inout ServiceStatus.LiveCounters) {
        let open = feed.open
        c.pageViewers = open.count
        c.pageFramesSent = sent.withLock { $0 }
        c.pageFramesDropped = droppedGone.withLock { $0 } + open.reduce(0) { $0 + $1.framesDropped }
    }
}
