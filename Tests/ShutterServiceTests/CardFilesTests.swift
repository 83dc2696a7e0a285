// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterControl
import ShutterCore
import ShutterStorage
@testable import ShutterWeb
import XCTest
@testable import ShutterService

/// `files` and `delete` (issue 20 item 5): one rule for shutterctl and the web page's
/// DELETE, in the service (CardFiles). Every verdict here is read from the card and
/// the replies, on the rig's manual clock.
final class CardFilesTests: XCTestCase {
    func names(_ paths: [String]) -> [String] { paths.map { ($0 as NSString).lastPathComponent } }

    func number(_ path: String) -> Int {
        let parts = path.split(separator: "/").suffix(2)
        return (Int(parts.first!.prefix(3))! * 10000) + Int(parts.last!.dropFirst(4).prefix(4))!
    }

    func testFilesListsNewestFirstWithNumberNameKindSizeAndTime() async throws {
        let r = try await InProcessRig.start(self, json: #"{"audio": {"enabled": false}}"#)
        let first = try await r.photo()
        let clip = try await r.ask(ControlRequest(cmd: "hold", seconds: 1))
        XCTAssertTrue(clip.ok, "\(clip)")
        let second = try await r.photo()
        let reply = try await r.ask(ControlRequest(cmd: "files"))
        XCTAssertTrue(reply.ok, "\(reply)")
        let items = try XCTUnwrap(reply.items)
        let clipPath = try XCTUnwrap(clip.files?.first)
        XCTAssertEqual(items.map(\.name), names([second, clipPath, first]), "newest first")
        XCTAssertEqual(items.map(\.number), [second, clipPath, first].map(number))
        XCTAssertEqual(items.map(\.kind), ["photo", "video", "photo"])
        for (item, path) in zip(items, [second, clipPath, first]) {
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt64
            XCTAssertEqual(item.bytes, size, item.name)
            XCTAssertNotNil(try? Date(item.modified, strategy: .iso8601), "ISO 8601: \(item.modified)")
        }
    }

    func testDeleteLastRemovesThePhotoJustTakenAndNothingElse() async throws {
        let r = try await InProcessRig.start(self, json: #"{"audio": {"enabled": false}}"#)
        let older = try await r.photo()
        let hold = try await r.ask(ControlRequest(cmd: "hold", seconds: 1))
        let clip = try XCTUnwrap(hold.files?.first, "\(hold)")
        let before = try await r.photo()
        let just = try await r.photo()
        let poster = (clip as NSString).deletingPathExtension + ".THM"
        let onCard = { FileManager.default.enumerator(atPath: r.root)?.compactMap { $0 as? String }.filter { !$0.hasPrefix(".") }.sorted() ?? [] }
        let cardBefore = onCard()

        let reply = try await r.ask(ControlRequest(cmd: "delete", file: "last"))
        XCTAssertTrue(reply.ok, "\(reply)")
        XCTAssertEqual(reply.deleted?.name, (just as NSString).lastPathComponent)
        XCTAssertEqual(reply.deleted?.number, number(just))
        XCTAssertFalse(FileManager.default.fileExists(atPath: just), "the photo just taken is gone")
        XCTAssertEqual(onCard(), cardBefore.filter { !just.hasSuffix($0) }, "and nothing else changed on the card")
        XCTAssertTrue(FileManager.default.fileExists(atPath: before))
        XCTAssertTrue(FileManager.default.fileExists(atPath: older))
        let status = await r.status()
        XCTAssertFalse(status.lastFiles.contains(just), "status names no file that is gone: \(status.lastFiles)")

        // Again: `last` is now the photo before it (the newest file, a photo).
        let again = try await r.ask(ControlRequest(cmd: "delete", file: "last"))
        XCTAssertEqual(again.deleted?.name, (before as NSString).lastPathComponent, "\(again)")
        // Then the newest file is the clip: `last` never deletes a clip.
        let refused = try await r.ask(ControlRequest(cmd: "delete", file: "last"))
        XCTAssertFalse(refused.ok)
        XCTAssertEqual(refused.notFound, true)
        XCTAssertTrue(refused.error?.contains("the newest file is the clip \((clip as NSString).lastPathComponent)") == true,
                      refused.error ?? "")
        XCTAssertTrue(FileManager.default.fileExists(atPath: clip))
        XCTAssertTrue(FileManager.default.fileExists(atPath: older))

        // By number: the clip and its poster go.
        let byNumber = try await r.ask(ControlRequest(cmd: "delete", file: String(number(clip))))
        XCTAssertTrue(byNumber.ok, "\(byNumber)")
        XCTAssertEqual(byNumber.deleted?.kind, "video")
        XCTAssertFalse(FileManager.default.fileExists(atPath: clip))
        XCTAssertFalse(FileManager.default.fileExists(atPath: poster))
        let gone = try await r.ask(ControlRequest(cmd: "delete", file: String(number(clip))))
        XCTAssertEqual(gone.notFound, true, "\(gone)")
        let bad = try await r.ask(ControlRequest(cmd: "delete", file: "../x"))
        XCTAssertFalse(bad.ok)
        let left = try await r.ask(ControlRequest(cmd: "files"))
        XCTAssertEqual(left.items?.map(\.name), names([older]))
    }

    func testDeleteIsRefusedWhileAClipIsRecordingWithTheReason() async throws {
        let r = try await InProcessRig.start(self, json: #"{"audio": {"enabled": false}}"#)
        let photo = try await r.photo()
        let start = try await r.ask(ControlRequest(cmd: "record", action: "start"))
        let clip = try XCTUnwrap(start.files?.first, "\(start)")
        try await r.wait(for: "recording")
        let last = try await r.ask(ControlRequest(cmd: "delete", file: "last"))
        XCTAssertFalse(last.ok)
        XCTAssertEqual(last.busy, true)
        let why = last.error ?? ""
        XCTAssertTrue(why.contains("recording \((clip as NSString).lastPathComponent)") && why.contains("delete last"), why)
        let theClip = try await r.ask(ControlRequest(cmd: "delete", file: String(number(clip))))
        XCTAssertFalse(theClip.ok)
        XCTAssertEqual(theClip.busy, true)
        XCTAssertTrue(theClip.error?.contains("being recorded") == true, theClip.error ?? "")
        XCTAssertTrue(FileManager.default.fileExists(atPath: photo), "nothing deleted")
        XCTAssertTrue(FileManager.default.fileExists(atPath: clip))

        let stop = try await r.ask(ControlRequest(cmd: "record", action: "stop"))
        XCTAssertTrue(stop.ok, "\(stop)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: clip), "the clip is whole after the stop")
        XCTAssertGreaterThan((try FileManager.default.attributesOfItem(atPath: clip)[.size] as? UInt64) ?? 0, 0)
    }

    /// The web page's DELETE asks the service (the control socket's path, as WebFrontend
    /// wires it) and answers with its verdict: the same rule as shutterctl's.
    func testTheWebPagesDeleteUsesTheSameRule() async throws {
        let r = try await InProcessRig.start(self, json: #"{"audio": {"enabled": false}}"#)
        let service = r.service
        // As WebFrontend.start builds it.
        let backend = WebBackend(request: { request, answer in
            let line = Data(JSONValue.object(request).rendered(pretty: false).utf8)
            let reply = Reply { reply in
                let data = ControlCoding.encode(reply)
                guard case .object(let o)? = try? JSONParser.parse(String(decoding: data, as: UTF8.self)).value else {
                    return answer(["ok": .bool(false), "error": .string("unreadable reply")])
                }
                answer(o)
            }
            switch ControlServer.check(line) {
            case .failure(let refusal): reply.send(refusal.reply)
            case .success(let r): service.post(.request(r, reply))
            }
        }, storage: service.storage)
        let app = WebApp(backend: backend, passwordHash: "")
        let (id, csrf) = app.sessions.create()
        /// One DELETE, answered on a thread of its own (WebApp waits for the service) while the clock moves.
        func delete(_ what: String) async throws -> (Int, JSONObject) {
            let answer = Pending()
            let got = WebAnswer()
            Thread.detachNewThread {
                let response = app.handle(WebRequest(
                    method: "DELETE", path: "/api/files/\(what)", client: "127.0.0.1", body: Data(), tls: false,
                    header: { ["cookie": "shutter_session=\(id)", "x-csrf-token": csrf][$0.lowercased()] }, query: { _ in nil }))
                got.set(response)
                answer.set(ControlReply(ok: true))
            }
            try await r.advance(until: "DELETE \(what) answered") { answer.reply != nil }
            let response = try XCTUnwrap(got.response)
            guard case .bytes(let body) = response.body,
                  case .object(let o) = try JSONParser.parse(String(decoding: body, as: UTF8.self)).value else {
                throw HarnessError("not JSON")
            }
            return (response.status, o)
        }

        let photo = try await r.photo()
        let start = try await r.ask(ControlRequest(cmd: "record", action: "start"))
        let clip = try XCTUnwrap(start.files?.first, "\(start)")
        try await r.wait(for: "recording")
        let (status, body) = try await delete("last")
        XCTAssertEqual(status, 409, "\(body)")
        let socketRefusal = try await r.ask(ControlRequest(cmd: "delete", file: "last"))
        XCTAssertEqual(body["error"], socketRefusal.error.map(JSONValue.string), "the web page is told what shutterctl is")
        let (clipStatus, clipBody) = try await delete(String(number(clip)))
        XCTAssertEqual(clipStatus, 409, "\(clipBody)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: photo) && FileManager.default.fileExists(atPath: clip))
        _ = try await r.ask(ControlRequest(cmd: "record", action: "stop"))

        let (lastStatus, lastBody) = try await delete("last")
        XCTAssertEqual(lastStatus, 404, "the newest file is the clip: no photo just taken \(lastBody)")
        let (okStatus, okBody) = try await delete(String(number(photo)))
        XCTAssertEqual(okStatus, 200, "\(okBody)")
        XCTAssertEqual(okBody["deleted"], .int(number(photo)))
        XCTAssertEqual(okBody["name"], .string((photo as NSString).lastPathComponent))
        XCTAssertFalse(FileManager.default.fileExists(atPath: photo))
        let (goneStatus, _) = try await delete(String(number(photo)))
        XCTAssertEqual(goneStatus, 404, "gone")
        XCTAssertTrue(FileManager.default.fileExists(atPath: clip))
    }
}

/// A web response to come, set once from another thread.
final class WebAnswer: @unchecked Sendable {
    // Unchecked: the lock guards `value`.
    private let lock = NSLock()
    private var value: WebResponse?
    func set(_ r: WebResponse) { lock.lock(); value = r; lock.unlock() }
    var response: WebResponse? { lock.lock(); defer { lock.unlock() }; return value }
}
