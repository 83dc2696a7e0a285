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
import ShutterPassword
import ShutterWeb
import Synchronization

/// The live video's wiring at start: the hub when anything serves it (the page, RTSP),
/// the page's feed, and who may watch over RTSP (the web page's API tokens, or its
/// password, as HTTP Basic's password).
enum LiveSetup {
    static func make(config: ShutterConfig) -> (LiveVideo?, LivePage?) {
        guard config.web.enabled || config.live.rtsp.enabled else { return (nil, nil) }
        let live = LiveVideo(config: config, preroll: config.video.prerollSeconds > 0)
        var page: LivePage?
        if config.web.enabled {
            page = LivePage(feed: LiveVideoFeed(maxViewers: config.live.maxViewers))
            live.add(page!)
        }
        return (live, page)
    }

    /// A view or control token, or the page's password. Argon2id takes a while (and its
    /// memory), so a password once right is remembered (by its digest) for the process, and
    /// at most one password is tried a second: guesses cannot keep the RTSP thread busy.
    static func accepts(config: ShutterConfig, tokens: WebTokens) -> @Sendable (String) -> Bool {
        let hash = config.web.passwordHash
        let known = Mutex<Set<Data>>([])
        let lastTry = Mutex<ContinuousClock.Instant?>(nil)
        return { password in
            if tokens.scope(of: password) != nil { return true }
            guard !hash.isEmpty else { return false }
            let key = Data(WebTokens.fingerprint(password))
            if known.withLock({ $0.contains(key) }) { return true }
            let now = ContinuousClock.now
            let mayTry = lastTry.withLock { t -> Bool in
                if let t, now - t < .seconds(1) { return false }
                t = now
                return true
            }
            guard mayTry, PasswordHash.verify(password, against: hash) else { return false }
            known.withLock { _ = $0.insert(key) }
            return true
        }
    }
}
