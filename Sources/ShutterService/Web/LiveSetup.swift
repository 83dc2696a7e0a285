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
import ShutterPassword
import ShutterWeb
import Synchronization

/// The live video's wiring at start: the hub when anything serves it (the page, RTSP),
/// the page's feed, and who may watch over RTSP (the web page's API tokens, or its
/// password, as HTTP Basic's password).
enum LiveSetup {
    static func make(config: ShutterConfig, overlay: TextOverlay? = nil) -> (LiveVideo?, LivePage?) {
        guard config.web.enabled || config.live.rtsp.enabled else { return (nil, nil) }
        let live = LiveVideo(config: config, preroll: config.video.prerollSeconds > 0, overlay: overlay)
        var page: LivePage?
        if config.web.enabled {
            page = LivePage(feed: LiveVideoFeed(maxViewers: config.live.maxViewers))
            live.add(page!)
        }
        return (live, page)
    }

    /// A view or control token, or the page's password, from a peer address. Wrong guesses
    /// slow down only the address they come from (a LoginThrottle, as the page's login): a
    /// throttled address has its passwords refused unchecked, tokens (unguessable) are always
    /// checked. Argon2id takes a while (and its memory), so a password once right is
    /// remembered (by its digest) for the process. A password with a NUL is refused, as the
    /// web API refuses it.
    static func accepts(config: ShutterConfig, tokens: WebTokens,
                        throttle: LoginThrottle = LoginThrottle()) -> @Sendable (String, String) -> Bool {
        let hash = config.web.passwordHash
        let known = Mutex<Set<Data>>([])
        return { password, address in
            guard !password.utf8.contains(0) else {
                throttle.failed(address)
                return false
            }
            if tokens.scope(of: password) != nil { return true }
            guard !hash.isEmpty, throttle.wait(for: address) == 0 else { return false }
            let key = Data(WebTokens.fingerprint(password))
            if known.withLock({ $0.contains(key) }) { return true }
            guard PasswordHash.verify(password, against: hash) else {
                throttle.failed(address)
                return false
            }
            throttle.succeeded(address)
            known.withLock { _ = $0.insert(key) }
            return true
        }
    }
}
