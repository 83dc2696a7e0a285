// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import ShutterStorage
@testable import ShutterWeb
import Synchronization
import XCTest

/// The server's one event thread never waits (issue 20 item 1): requests wait for
/// the service on workers while their connection is parked, a stream with nothing to
/// send is parked until it is woken, and stopping ends both (libmicrohttpd must have
/// no parked connection when it stops).
final class WebServerParkingTests: XCTestCase {
    var root = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/shutter-webpark-XXXXXX".utf8CString)
        root = String(cString: try XCTUnwrap(mkdtemp(&template)))
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: root) }

    func server(feed: PreviewFeed? = nil, reply: @escaping @Sendable (JSONObject, @escaping @Sendable (JSONObject) -> Void) -> Void)
        throws -> (WebServer, cookie: String) {
        let storage = Storage(root: root, budget: CaptureBudget(photoBytes: 1, videoBytes: 1))
        let app = WebApp(backend: WebBackend(request: reply, storage: storage, preview: feed), passwordHash: "")
        let server = try WebServer(app: app, listener: .address(try XCTUnwrap(ListenAddress(parsing: "127.0.0.1:0"))), tls: nil)
        let (id, _) = app.sessions.create()
        return (server, "\(WebSessions.cookieName)=\(id)")
    }

    func testAParkedPreviewIsWokenByEachFrameAndStopEndsIt() throws {
        let feed = PreviewFeed()
        let (server, cookie) = try server(feed: feed) { _, answer in answer(["ok": .bool(true)]) }
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /preview.mjpg HTTP/1.1\r\nHost: x\r\nCookie: \(cookie)\r\n\r\n")
        XCTAssertTrue(waitUntil(timeout: 10) { feed.watched }, "the viewer is registered")
        for n in 1...3 {
            feed.publish(jpeg: Data("frame-\(n)".utf8))
            XCTAssertTrue(client.read(until: "frame-\(n)", timeout: 10), "frame \(n) reaches the parked viewer: \(client.received)")
        }
        let stopped = Mutex(false)
        Thread.detachNewThread { server.stop(); stopped.withLock { $0 = true } }
        XCTAssertTrue(waitUntil(timeout: 10) { stopped.withLock { $0 } }, "stop returns with a viewer parked")
        XCTAssertTrue(client.readToEnd(timeout: 10), "the viewer's connection ends")
        XCTAssertFalse(feed.watched)
    }

    /// Eight requests wait for a wedged service on the eight workers and four more are
    /// queued behind them; a page asked then is read and queued too (the event thread
    /// never waits). At stop the queued ones get 503 and the running ones their answer.
    func testRequestsWaitOnWorkersNotOnTheEventThreadAndStopAnswersEveryOne() throws {
        // The wedged service: it answers once the gate opens (on its own thread; the
        // WebApp's worker waits for it).
        let gate = DispatchSemaphore(value: 0)
        let running = Mutex(0)
        let answeredByHandlers = Mutex(0)
        let (server, cookie) = try server { _, answer in
            running.withLock { $0 += 1 }
            DispatchQueue.global().async {
                _ = gate.wait(timeout: .now() + 30)
                gate.signal()
                answeredByHandlers.withLock { $0 += 1 }
                answer(["ok": .bool(true)])
            }
        }
        let login = try RawHTTPClient(port: server.port)
        var waiting: [RawHTTPClient] = []
        for _ in 0..<12 {
            let c = try RawHTTPClient(port: server.port)
            try c.send("GET /api/status HTTP/1.1\r\nHost: x\r\nCookie: \(cookie)\r\n\r\n")
            waiting.append(c)
        }
        // Every worker holds a request (the handlers say so), the rest wait in the queue.
        XCTAssertTrue(waitUntil(timeout: 20) { running.withLock { $0 } >= 8 }, "eight requests reached their handlers")
        // All eight workers wait: a new request is queued, not lost, and the event
        // thread still accepts and reads it.
        try login.send("GET /login HTTP/1.1\r\nHost: x\r\n\r\n")
        // Stop, and note how many handlers had answered when it returned.
        let stopped = Mutex<Int?>(nil)
        Thread.detachNewThread { server.stop(); let n = answeredByHandlers.withLock { $0 }; stopped.withLock { $0 = n } }
        // The server says it is stopping: a request sent now is refused at once ("the camera
        // service is stopping"), by the event thread, while the eight handlers still wait.
        // One that came before stop began is queued instead (answered 503 later): try again.
        var probes: [RawHTTPClient] = []
        var refusedAsStopping = false
        for _ in 0..<20 where !refusedAsStopping {
            let probe = try RawHTTPClient(port: server.port)
            try probe.send("GET /api/status HTTP/1.1\r\nHost: x\r\nCookie: \(cookie)\r\n\r\n")
            probes.append(probe)
            refusedAsStopping = probe.read(until: "is stopping", timeout: 1)
        }
        XCTAssertTrue(refusedAsStopping, "a request sent after stop began is refused as stopping")
        XCTAssertNil(stopped.withLock { $0 }, "stop waits for the running requests: it returned before their handlers answered")
        gate.signal()
        XCTAssertTrue(waitUntil(timeout: 20) { stopped.withLock { $0 } != nil }, "stop returns once they are answered")
        XCTAssertEqual(stopped.withLock { $0 }, 8, "stop returned after all eight handlers answered, not before")
        var answered = 0, refused = 0
        for c in waiting + [login] + probes {
            XCTAssertTrue(c.readToEnd(timeout: 10))
            if c.received.hasPrefix("HTTP/1.1 200") { answered += 1 }
            if c.received.hasPrefix("HTTP/1.1 503") { refused += 1 }
        }
        print("figure: \(answered) answered, \(refused) refused 503 at stop")
        XCTAssertEqual(answered + refused, 13 + probes.count, "every request got an answer")
        XCTAssertGreaterThanOrEqual(answered, 8, "the eight running ones were answered")
    }

    /// `/api/events` as a stream: the state first, parked with nothing to send, woken
    /// by the next event; a client that reads nothing while 256 KiB pile up is let go;
    /// closing stops watching.
    func testAnEventStreamIsWokenByEventsAndLetsASlowClientGo() throws {
        let events = LiveEvents()
        events.publish(LiveEvent(type: "state", data: ["state": .string("ready")]))
        let woken = Mutex(0)
        let stream = LiveEventStream(events: events) { $0.data }
        stream.whenReady { woken.withLock { $0 += 1 } }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        func read() -> String? {
            buffer.withUnsafeMutableBytes { b in stream.read(into: b).map { String(decoding: b.prefix($0), as: UTF8.self) } }
        }
        XCTAssertEqual(read(), "retry: 2000\n\nevent: state\ndata: {\"state\":\"ready\"}\n\n")
        XCTAssertEqual(read(), "", "nothing more: 0 bytes, the connection is parked")
        events.publish(LiveEvent(type: "file", data: ["number": .int(7)]))
        XCTAssertEqual(woken.withLock { $0 }, 1, "the event woke the connection")
        XCTAssertEqual(read(), "event: file\ndata: {\"number\":7}\n\n")
        let big = String(repeating: "x", count: 1000)
        for _ in 0..<300 { events.publish(LiveEvent(type: "setting", data: ["value": .string(big)])) }
        XCTAssertNil(read(), "a client 256 KiB behind is let go")
        stream.close()
        XCTAssertEqual(events.watcherCount, 0, "closed: no longer watching")
    }

    func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return condition()
    }
}

/// HTTP/1.1 over a plain socket: what was sent is exactly what a client sends.
final class RawHTTPClient {
    let fd: Int32
    private(set) var received = ""

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = in_port_t(UInt16(port).bigEndian)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0 else { close(fd); throw POSIXError(.ECONNREFUSED) }
    }

    deinit { close(fd) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else { throw POSIXError(.EIO) }
    }

    /// Reads until `marker` has arrived; false on timeout or end.
    func read(until marker: String, timeout: Double) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while !received.contains(marker) {
            guard Date() < end, readSome(timeout: end.timeIntervalSinceNow) > 0 else { return received.contains(marker) }
        }
        return true
    }

    /// Reads until the server closes; false on timeout.
    func readToEnd(timeout: Double) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            let n = readSome(timeout: end.timeIntervalSinceNow)
            if n <= 0 { return n == 0 || n == -2 }
        }
        return false
    }

    /// Bytes read; 0 at the end; -1 on timeout; -2 on a reset.
    private func readSome(timeout: Double) -> Int {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, Int32(max(1, timeout * 1000))) == 1 else { return -1 }
        var buf = [UInt8](repeating: 0, count: 65536)
        let n = Foundation.read(fd, &buf, buf.count)
        if n < 0 { return -2 }
        received += String(decoding: buf[0..<n], as: UTF8.self)
        return n
    }
}
