// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import Synchronization
import XCTest
import ShutterCore
@testable import ShutterService

/// What live watchers are told (issue 20 item 4), on the whole service in process on
/// the manual clock: the state first, a recording's seconds once a second as they
/// change, files saved, a setting changed; the same seconds in `status.recording`.
final class LiveEventsTests: XCTestCase {
    final class Seen: Sendable {
        private let events = Mutex([LiveEvent]())
        func add(_ e: LiveEvent) { events.withLock { $0.append(e) } }
        var all: [LiveEvent] { events.withLock { $0 } }
        func of(_ type: String) -> [JSONObject] { all.filter { $0.type == type }.map(\.data) }
    }

    func testStateSecondsFilesAndSettingsReachAWatcher() async throws {
        let r = try await InProcessRig.start(self)
        let seen = Seen()
        let id = r.service.events.watch { seen.add($0) }
        defer { r.service.events.stopWatching(id) }
        XCTAssertEqual(seen.all.first?.type, "state", "a watcher starts from the current state")
        XCTAssertEqual(seen.all.first?.data["state"], .string("ready"))

        let hold = r.send(ControlRequest(cmd: "hold", seconds: 3))
        try await r.wait(for: "recording")
        try await r.advance(until: "1 s recorded") { (await r.status()).recording.map { $0.elapsedSeconds >= 1 } ?? false }
        let status = await r.status()
        let figures = try XCTUnwrap(status.recording, "status carries a clip's seconds")
        XCTAssertGreaterThanOrEqual(figures.elapsedSeconds, 1)
        XCTAssertEqual(figures.elapsedSeconds + figures.remainingSeconds, 3, accuracy: 0.25, "\(figures)")
        try await r.advance(until: "the hold's answer") { hold.reply != nil }
        XCTAssertTrue(hold.reply?.ok == true, "\(String(describing: hold.reply))")

        let recording = seen.of("state").filter { $0["state"] == .string("recording") }
        let seconds = recording.compactMap { o -> [Int]? in
            guard case .int(let e)? = o["elapsedSeconds"], case .int(let left)? = o["remainingSeconds"] else { return nil }
            return [e, left]
        }
        print("figure: recording states seen \(seconds)")
        XCTAssertEqual(seconds, [[0, 3], [1, 2], [2, 1]], "once a second, elapsed and remaining from the service")
        XCTAssertEqual(Array(seen.of("state").map { $0["state"] }.suffix(2)), [.string("saving"), .string("ready")])
        let clip = try XCTUnwrap(seen.of("file").last)
        XCTAssertEqual(clip["kind"], .string("video"))
        XCTAssertEqual(clip["path"], .string(try XCTUnwrap(r.files("MP4").first)))

        let photo = try await r.photo()
        XCTAssertEqual(seen.of("file").last?["path"], .string(photo))
        XCTAssertEqual(seen.of("file").last?["kind"], .string("photo"))
        XCTAssertEqual(seen.of("file").count, 2, "one event per file, no poster")

        let set = try await r.ask("set", "camera.exposure.ev", .double(1))
        XCTAssertTrue(set.ok, "\(set)")
        try await r.advance(until: "the setting's event") { !seen.of("setting").isEmpty }
        XCTAssertEqual(seen.of("setting"), [["name": .string("camera.exposure.ev"), "value": .double(1)]])
        XCTAssertEqual(seen.of("camera"), [], "no switch, no camera event")
    }

    /// A state the page shows as an error carries its LED code and what it means.
    func testAnErrorStateCarriesItsLEDCodeAndMeaning() {
        let s = LiveReport.Snapshot(state: .storageUnavailable(.storageFull), recording: nil, lastError: nil)
        let o = LiveReport.state(s, at: MonotonicTime(nanoseconds: 0))
        XCTAssertEqual(o["state"], .string("error"))
        XCTAssertEqual(o["ledCode"], .int(3))
        XCTAssertEqual(o["message"], .string(LEDErrorCode.storageFull.meaning))
        XCTAssertEqual(o["detail"], .string("storage-unavailable-3"))
    }
}
