// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import Synchronization

/// The RTSP server as a part of the service (`live.rtsp.enabled`): listening from the
/// start, closed at the stop. A failure to listen (a port in use) is a failed start, which
/// the parts' policy tries again later, as the web page's.
final class RTSPPart: ServicePart {
    private let config: ShutterConfig
    private let live: LiveVideo
    private let accepts: (@Sendable (String, String) -> Bool)?
    private let server = Mutex<RTSPServer?>(nil)
    private let log = Log("shutter.rtsp")

    /// `accepts`: whether a Basic password from a peer address may watch; nil with `live.rtsp.open`.
    init(config: ShutterConfig, live: LiveVideo, accepts: (@Sendable (String, String) -> Bool)?) {
        self.config = config
        self.live = live
        self.accepts = config.live.rtsp.open ? nil : accepts
    }

    /// Why shutterd must not start: RTSP on, not open, and nothing a viewer could log in with.
    static func refusal(_ config: ShutterConfig, hasTokens: Bool) -> String? {
        guard config.live.rtsp.enabled, !config.live.rtsp.open, !hasTokens, config.web.passwordHash.isEmpty else { return nil }
        return "live.rtsp.enabled is true but no viewer could log in: add an API token (`shutterctl web-token add NAME "
            + "--scope view`, its token is the RTSP password) or set web.passwordHash, or set live.rtsp.open to true "
            + "for a stream without a password"
    }

    var name: String { "the live RTSP stream" }

    func start(_ service: CameraService) -> PartStart {
        let listen = ListenAddress(parsing: config.live.rtsp.listen)!  // validated with the configuration
        // shutterd-rtsp.socket's (FileDescriptorName=rtsp): systemd listens for a shutterd
        // that has no network of its own; live.rtsp.listen is then the socket unit's to say.
        let passed = SystemdSockets.socket(named: ["rtsp"])
        do throws(RTSPServer.StartError) {
            let socket = try passed.map { fd throws(RTSPServer.StartError) -> Int32 in
                guard let copy = SystemdSockets.copy(fd) else {
                    throw RTSPServer.StartError(description: "no descriptor left to listen on the socket systemd passed")
                }
                return copy
            }
            let s = try RTSPServer(host: listen.host, port: listen.port, socket: socket, maxViewers: config.live.maxViewers,
                                   accepts: accepts)
            server.withLock { $0 = s }
            live.add(s)
            let open = accepts == nil ? " (open: no password)" : ""
            if passed != nil {
                log.notice("live video on the socket systemd passed (shutterd-rtsp.socket, port \(s.port)), path /live, "
                           + "RTP over the RTSP connection (TCP)\(open)")
            } else {
                let shown = listen.host.contains(":") ? "[\(listen.host)]" : listen.host
                log.notice("live video on rtsp://\(shown):\(s.port)/live\(open)")
            }
            return .running
        } catch {
            var why = "\(error)"
            // Under its unit shutterd has no network of its own: the fix is the socket unit.
            if passed == nil, getenv("INVOCATION_ID") != nil {
                why += "; under shutterd.service shutterd cannot listen itself (PrivateNetwork=yes): let systemd listen for "
                    + "it, `sudo systemctl enable --now shutterd-rtsp.socket`, then `sudo systemctl restart shutterd` "
                    + "(docs/home-automation.md, Live video)"
            }
            log.error("live RTSP not started: \(why)")
            return .failed(why)
        }
    }

    func stop() {
        guard let s = server.withLock({ s in defer { s = nil }; return s }) else { return }
        live.remove(s)
        s.stop()
        live.stop()
    }
}
