// SPDX-License-Identifier: BSD-2-Clause
import Dispatch
import Foundation
import Synchronization
import XCTest
import ShutterControl
import ShutterCore
@testable import ShutterService

/// `timelapse` on the whole service in process, on the manual clock, from real JPEGs the
/// simulated camera took: the film held by the test after a photo (the hook gives its work
/// back while held), a tap meanwhile taken and saved at once, a second film refused, the
/// film then finished with every photo of the range, checked with FFmpeg's tools; cancel;
/// the errors. Verdicts on the replies, status, events and the card.
final class TimelapseServiceTests: XCTestCase {
    /// Holds the film's thread after photo `at` until `release`: its work count is given
    /// back while held (nothing the clock can end), and taken again by the release.
    final class Gate: Sendable {
        let at: Int
        private let held = Atomic(false)
        private let go = DispatchSemaphore(value: 0)
        init(at: Int) { self.at = at }
        var isHeld: Bool { held.load(ordering: .sequentiallyConsistent) }
        func hook(_ done: Int, _ work: InFlight) {
            guard done == at else { return }
            work.end()
            held.store(true, ordering: .sequentiallyConsistent)
            go.wait()
        }
        func release(_ work: InFlight) {
            held.store(false, ordering: .sequentiallyConsistent)
            work.begin()
            go.signal()
        }
    }

    final class Seen: Sendable {
        private let events = Mutex([LiveEvent]())
        func add(_ e: LiveEvent) { events.withLock { $0.append(e) } }
        var timelapse: [JSONObject] { events.withLock { $0.filter { $0.type == "timelapse" }.map(\.data) } }
    }

    /// "…/DCIM/100SHUTR/SHTR0003.JPG" as `shutterctl files` numbers it: 1000003.
    static func number(_ path: String) -> Int {
        let parts = path.split(separator: "/")
        let dir = Int(parts[parts.count - 2].prefix(3))!, file = Int(parts[parts.count - 1].dropFirst(4).prefix(4))!
        return dir * 10000 + file
    }

    static func psnr(_ film: String, frame n: Int, against photo: String, width: Int, height: Int) throws -> Double {
        let graph = "[0:v]select=eq(n\\,\(n)),format=yuv420p[a];[1:v]scale=\(width):\(height),format=yuv420p[b];[a][b]psnr"
        let (_, _, err) = try runTool("ffmpeg", ["-nostdin", "-hide_banner", "-i", film, "-i", photo, "-filter_complex", graph,
                                                 "-f", "null", "-"])
        guard let r = err.range(of: "average:") else { throw HarnessError("no PSNR: \(err.suffix(600))") }
        let text = err[r.upperBound...].prefix { !$0.isWhitespace }
        return text == "inf" ? 99 : try XCTUnwrap(Double(text))
    }

    static func stream(_ path: String) throws -> [String: Any] {
        let (_, out, _) = try runTool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v", "-show_entries",
                                                  "stream=codec_name,width,height,r_frame_rate,nb_read_frames", "-of", "json", path])
        let obj = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any]
        return (obj?["streams"] as? [[String: Any]])?.first ?? [:]
    }

    func testAFilmOfTheCardsPhotosWhileATapIsTakenAtOnce() async throws {
        let gate = Gate(at: 2)
        let r = try await InProcessRig.start(self, json: #"{"video": {"fps": 10}}"#, timelapsePhoto: gate.hook)
        var shots: [String] = []
        for _ in 0..<5 { shots.append(try await r.photo()) }
        let seen = Seen()
        let watch = r.service.events.watch { seen.add($0) }
        defer { r.service.events.stopWatching(watch) }

        var ask = ControlRequest(cmd: "timelapse")
        ask.from = String(Self.number(shots[0]))
        ask.to = String(Self.number(shots[4]))
        ask.fps = 5
        let film = r.send(ask)
        try await r.advance(until: "the film held after its 2nd photo") { gate.isHeld }
        let status = await r.status()
        let making = try XCTUnwrap(status.timelapse, "status.timelapse while the film is made")
        XCTAssertEqual(making.state, "making")
        XCTAssertEqual(making.done, 2)
        XCTAssertEqual(making.of, 5)
        let name = "timelapse-\(Self.number(shots[0]))-\(Self.number(shots[4])).MP4"
        XCTAssertEqual(making.output, r.root + "/DCIM/" + name)

        // A tap while the film is made: taken and saved at once, the film still held.
        let during = try await r.photo()
        XCTAssertTrue(FileManager.default.fileExists(atPath: during))
        XCTAssertNil(film.reply, "the film is still being made")
        // A second film: refused at once, with the first's progress.
        let second = try await r.ask(ask)
        XCTAssertFalse(second.ok)
        XCTAssertEqual(second.busy, true, "\(second)")
        XCTAssertEqual(second.timelapse?.done, 2, "\(second)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: r.root + "/DCIM/" + name), "nothing under the film's name yet")

        gate.release(r.service.ctx.work)
        try await r.advance(until: "the film's reply") { film.reply != nil }
        let reply = try XCTUnwrap(film.reply)
        XCTAssertTrue(reply.ok, "\(reply)\n\(r.log.text.suffix(2000))")
        let path = try XCTUnwrap(reply.files?.first)
        XCTAssertEqual(path, r.root + "/DCIM/" + name)
        XCTAssertEqual(reply.timelapse?.state, "done")
        XCTAssertEqual(reply.timelapse?.frames, 5, "the range's 5 photos, not the tap taken meanwhile")
        let afterwards = await r.status()
        XCTAssertNil(afterwards.timelapse, "no film being made any more")

        // The film, as FFmpeg reads it: the 5 photos at 5 fps, at the photos' size.
        let (_, size, _) = try runTool("ffprobe", ["-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0", shots[0]])
        let wh = size.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").compactMap { Int($0) }
        XCTAssertEqual(wh.count, 2, size)
        let s = try Self.stream(path)
        XCTAssertEqual(s["codec_name"] as? String, "h264")
        XCTAssertEqual(s["nb_read_frames"] as? String, "5")
        XCTAssertEqual(s["r_frame_rate"] as? String, "5/1")
        let (w, h) = (wh[0] > 1920 || wh[1] > 1080) ? (1920, 1080) : (wh[0], wh[1])
        XCTAssertEqual(s["width"] as? Int, w)
        XCTAssertEqual(s["height"] as? Int, h)
        XCTAssertEqual(reply.timelapse?.width, w)
        // Frame 0 is the first photo, not the last (the simulated scene moves between taps).
        let matched = try Self.psnr(path, frame: 0, against: shots[0], width: w, height: h)
        let other = try Self.psnr(path, frame: 0, against: shots[4], width: w, height: h)
        XCTAssertGreaterThan(matched, 30, "frame 0 is the first photo (PSNR \(matched) dB)")
        XCTAssertLessThan(other, matched - 3, "and not the last (PSNR \(other) dB)")
        print("time-lapse of the simulated camera's photos: frame 0 against its photo PSNR \(matched) dB, "
              + "against the last photo \(other) dB")

        // Watchers saw it made: the range, its photos, the end.
        let events = seen.timelapse
        XCTAssertEqual(events.last?["state"], .string("done"), "\(events)")
        XCTAssertEqual(events.last?["name"], .string(name))
        let dones = events.compactMap { e -> Int? in if case .int(let n)? = e["done"] { return n }; return nil }
        XCTAssertEqual(dones, dones.sorted(), "progress only goes forward: \(dones)")
        XCTAssertTrue(dones.contains(2), "\(dones)")
        // Its thread at the lowest priority, CPU and I/O, as its log line says.
        XCTAssertTrue(r.log.text.contains("time-lapse: its thread runs at nice 19, I/O class idle"),
                      "\(r.log.text.suffix(1500))")
        let hidden = try FileManager.default.contentsOfDirectory(atPath: r.root + "/DCIM").filter { $0.hasPrefix(".") }
        XCTAssertEqual(hidden, [], "no hidden file left beside the film")
    }

    func testCancelLeavesNoFilmAndTheErrorsSayWhy() async throws {
        let gate = Gate(at: 1)
        let r = try await InProcessRig.start(self, json: #"{"video": {"fps": 10}}"#, timelapsePhoto: gate.hook)
        // No photos yet: said at once, nothing made.
        var none = try await r.ask(ControlRequest(cmd: "timelapse"))
        XCTAssertFalse(none.ok)
        XCTAssertTrue(none.error?.contains("no photos") == true, "\(none)")
        let shots = [try await r.photo(), try await r.photo(), try await r.photo()]
        var late = ControlRequest(cmd: "timelapse")
        late.from = "2099-01-01"
        none = try await r.ask(late)
        XCTAssertTrue(none.error?.contains("no photos from 2099-01-01 on") == true, "\(none)")
        var bad = ControlRequest(cmd: "timelapse")
        bad.to = "yesterday"
        none = try await r.ask(bad)
        XCTAssertTrue(none.error?.contains("is neither") == true, "\(none)")
        bad = ControlRequest(cmd: "timelapse")
        bad.output = "../x.MP4"
        none = try await r.ask(bad)
        XCTAssertTrue(none.error?.contains("file name ending in .MP4") == true, "\(none)")

        // Cancelled while held after its first photo: its request says so, nothing kept.
        var ask = ControlRequest(cmd: "timelapse")
        ask.output = "garden.MP4"
        let film = r.send(ask)
        try await r.advance(until: "the film held") { gate.isHeld }
        let cancel = try await r.ask(ControlRequest(cmd: "timelapse", action: "cancel"))
        XCTAssertTrue(cancel.ok, "\(cancel)")
        XCTAssertEqual(cancel.timelapse?.of, shots.count)
        gate.release(r.service.ctx.work)
        try await r.advance(until: "the film's reply") { film.reply != nil }
        XCTAssertEqual(film.reply?.ok, false)
        XCTAssertEqual(film.reply?.timelapse?.state, "cancelled", "\(String(describing: film.reply))")
        let dcim = try FileManager.default.contentsOfDirectory(atPath: r.root + "/DCIM")
        XCTAssertFalse(dcim.contains("garden.MP4"))
        XCTAssertEqual(dcim.filter { $0.hasPrefix(".") }, [], "\(dcim)")
        let again = try await r.ask(ControlRequest(cmd: "timelapse", action: "cancel"))
        XCTAssertFalse(again.ok, "nothing to cancel now")
    }
    func testShutterdStoppingStopsTheFilmAndKeepsNothing() async throws {
        let gate = Gate(at: 1)
        let r = try await InProcessRig.start(self, json: #"{"video": {"fps": 10}}"#, timelapsePhoto: gate.hook)
        for _ in 0..<3 { _ = try await r.photo() }
        let film = r.send(ControlRequest(cmd: "timelapse"))
        try await r.advance(until: "the film held") { gate.isHeld }
        r.service.stop()
        await r.advance(by: .milliseconds(100))
        XCTAssertNil(r.service.exited, "the service waits for the film's thread")
        gate.release(r.service.ctx.work)
        let code = try await r.exitCode()
        XCTAssertEqual(code, 0)
        XCTAssertEqual(film.reply?.timelapse?.state, "cancelled", "\(String(describing: film.reply))")
        XCTAssertTrue(film.reply?.error?.contains("stopped after 1 of 3 photos") == true, "\(String(describing: film.reply))")
        let dcim = try FileManager.default.contentsOfDirectory(atPath: r.root + "/DCIM")
        XCTAssertEqual(dcim.filter { $0.hasSuffix(".MP4") || $0.hasPrefix(".") }, [], "\(dcim)")
    }
}
