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

/// One whole request as the web app sees it (read on the connection's thread).
public struct WebRequest {
    public var method: String
    /// Percent-decoded path, no query.
    public var path: String
    public var client: String
    public var body: Data
    public var tls: Bool
    public var header: (String) -> String?
    public var query: (String) -> String?
}

/// The app's answer; the shim turns it into a libmicrohttpd response.
public struct WebResponse {
    public enum Body {
        case bytes(Data)
        /// `length` bytes of `fd` from `offset` (closed with the response).
        case file(fd: Int32, offset: UInt64, length: UInt64)
        /// An endless body, written by `stream` (the live preview).
        case stream(any WebStream)
    }

    public var status: Int
    public var contentType: String
    public var body: Body
    public var headers: [(String, String)] = []

    public init(status: Int, contentType: String, body: Body, headers: [(String, String)] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    public static func json(_ status: Int, _ value: JSONObject) -> WebResponse {
        WebResponse(status: status, contentType: "application/json", body: .bytes(Data((value.rendered() + "\n").utf8)),
                    headers: [("Cache-Control", "no-store")])
    }

    public static func error(_ status: Int, _ message: String, _ extra: JSONObject = [:]) -> WebResponse {
        var o = extra
        o["ok"] = .bool(false)
        o["error"] = .string(message)
        return json(status, o)
    }
}

/// A streamed body. `read` runs on the server's one event thread, so it never
/// waits: it fills the buffer and returns the bytes written, 0 when nothing is
/// ready (the connection is parked), or nil at the end. The stream calls the
/// closure given to `whenReady` when it has more (any thread); the server also
/// asks once a second, so a stream can end or send a keep-alive on its own clock.
public protocol WebStream: AnyObject, Sendable {
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int?
    /// Set once by the server before the first `read`.
    func whenReady(_ wake: @escaping @Sendable () -> Void)
    /// The client went away or the server stops.
    func close()
}


extension Dictionary where Key == String, Value == JSONValue {
    func rendered() -> String { JSONValue.object(self).rendered(pretty: false) }
}

/// A NUL-terminated C buffer as a String (String(cString:) on arrays is deprecated).
func cString(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
