// SPDX-License-Identifier: BSD-2-Clause
import CShutterWeb
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import Synchronization

/// The HTTP server: libmicrohttpd through the CShutterWeb shim, one epoll
/// thread for every connection, bounded connections, bodies and time; each
/// request goes to the `WebApp` whole, on one of a few worker threads.
public final class WebServer: Sendable {
    /// Limits (docs/control-and-api.md "From a phone"), sized for people: a phone opens 6 to 8
    /// connections at once (the preview, the events, thumbnails), a household a few
    /// phones and a home-automation server. Past `perClient` from one address a
    /// request gets 503 and Retry-After; past twice that libmicrohttpd refuses the
    /// connection (a flood). An idle connection costs its memory pool, not a thread.
    public struct Limits: Sendable {
        public var connections: UInt32 = 256
        public var perClient: UInt32 = 32
        public var timeoutSeconds: UInt32 = 30
        public var memoryPerConnection = 32 * 1024
        public var maxBody = 4 * 1024
        /// Threads that run requests (each may wait for the camera or Argon2id).
        public var workers: UInt32 = 8
        public init() {}
    }

    public enum Listener: Sendable {
        /// Bind this address ourselves (outside systemd, tests, `make run`).
        case address(ListenAddress)
        /// A socket systemd passed (socket activation).
        case inherited(fd: Int32)
    }

    public let app: WebApp
    /// The running daemon; nil once stopped.
    private let handle: Mutex<WebShimHandle?>
    public let port: Int

    /// Starts listening. Throws a message for the log when it cannot.
    public init(app: WebApp, listener: Listener, tls: (certificatePEM: String, keyPEM: String)?, limits: Limits = Limits()) throws {
        self.app = app
        var o = shutter_web_options()
        o.listen_fd = -1
        o.connection_limit = limits.connections
        o.per_ip_limit = limits.perClient
        o.timeout_seconds = limits.timeoutSeconds
        o.memory_limit = limits.memoryPerConnection
        o.max_body = limits.maxBody
        o.workers = limits.workers
        var err = [CChar](repeating: 0, count: 256)
        let host: String
        switch listener {
        case .address(let a): host = a.host; o.port = UInt16(a.port)
        case .inherited(let fd):
            host = ""
            guard let copy = SystemdSockets.copy(fd) else { throw WebServerError("no descriptor left to listen on the socket systemd passed") }
            o.listen_fd = copy
        }
        let ctx = Unmanaged.passUnretained(app).toOpaque()
        let started: OpaquePointer? = host.withCString { h in
            o.host = h
            return (tls?.certificatePEM ?? "").withCString { cert in
                (tls?.keyPEM ?? "").withCString { key in
                    if tls != nil { o.tls_cert_pem = cert; o.tls_key_pem = key }
                    return shutter_web_start(&o, webServerHandler, ctx, &err, err.count)
                }
            }
        }
        guard let started else { throw WebServerError(cString(err)) }
        handle = Mutex(WebShimHandle(raw: started))
        port = Int(shutter_web_port(started))
    }

    /// Stops accepting and ends the connections (open streams first).
    public func stop() {
        let taken = handle.withLock { h in
            defer { h = nil }
            return h
        }
        guard let h = taken else { return }
        app.closeStreams()
        shutter_web_stop(h.raw)
    }

    deinit { stop() }

    /// The page's socket systemd passed to this process, if any: shutterd.socket's (or
    /// `FileDescriptorName=web`, or the one socket of a caller that named none). The
    /// server listens on a copy (it closes it at its stop): a restarted page gets another.
    public static func systemdSocket() -> Int32? {
        SystemdSockets.socket(named: ["shutterd.socket", "web", "unknown"])
    }
}

public struct WebServerError: Error, CustomStringConvertible {
    public var description: String
    init(_ d: String) { description = d }
}

/// The shim's callback: one whole request, answered on this worker thread.
private let webServerHandler: shutter_web_handler = { ctx, ex in
    guard let ctx, let ex else { return }
    let app = Unmanaged<WebApp>.fromOpaque(ctx).takeUnretainedValue()
    var length = 0
    let bodyPointer = shutter_web_body(ex, &length)
    let request = WebRequest(
        method: String(cString: shutter_web_method(ex)),
        path: String(cString: shutter_web_url(ex)),
        client: String(cString: shutter_web_client(ex)),
        body: bodyPointer.map { Data(bytes: $0, count: length) } ?? Data(),
        tls: shutter_web_is_tls(ex) == 1,
        header: { name in shutter_web_header(ex, name).map { String(cString: $0) } },
        query: { name in shutter_web_query(ex, name).map { String(cString: $0) } })
    let response = app.handle(request)
    switch response.body {
    case .bytes(let data):
        data.withUnsafeBytes { buf in
            shutter_web_reply_bytes(ex, UInt32(response.status), response.contentType, buf.baseAddress, buf.count)
        }
    case .file(let fd, let offset, let length):
        if shutter_web_reply_file(ex, UInt32(response.status), response.contentType, fd, offset, length) == 0 {
            return  // no reply: the shim answers 500
        }
    case .stream(let stream):
        let box = StreamBox(stream)
        let ctx = Unmanaged.passRetained(box).toOpaque()
        guard let handle = shutter_web_reply_stream(ex, UInt32(response.status), response.contentType, streamReader, ctx,
                                                    streamRelease) else { return }
        box.attach(handle)
        stream.whenReady { [weak box] in box?.wake() }
    }
    for (name, value) in response.headers { shutter_web_add_header(ex, name, value) }
}

/// A handle the CShutterWeb shim gave: its daemon, or one parked stream.
// Unchecked: an opaque C pointer, and the shim's calls on it lock (any thread may make them).
private struct WebShimHandle: @unchecked Sendable {
    let raw: OpaquePointer
}

/// A stream and the shim's handle to wake its parked connection. The handle is
/// dropped (under the lock) when the shim releases the stream, so a late wake is a no-op.
private final class StreamBox: Sendable {
    let stream: any WebStream
    private let handle = Mutex<WebShimHandle?>(nil)
    init(_ s: any WebStream) { stream = s }

    func attach(_ h: OpaquePointer) { handle.withLock { $0 = WebShimHandle(raw: h) } }
    func detach() { handle.withLock { $0 = nil } }
    func wake() {
        handle.withLock { h in
            if let h { shutter_web_stream_wake(h.raw) }
        }
    }
}

private let streamReader: shutter_web_reader = { ctx, _, buf, max in
    guard let ctx, let buf else { return -2 }
    let box = Unmanaged<StreamBox>.fromOpaque(ctx).takeUnretainedValue()
    guard let n = box.stream.read(into: UnsafeMutableRawBufferPointer(start: buf, count: max)) else { return -1 }
    return n
}

private let streamRelease: shutter_web_reader_free = { ctx in
    guard let ctx else { return }
    let box = Unmanaged<StreamBox>.fromOpaque(ctx).takeRetainedValue()
    box.detach()
    box.stream.close()
}
