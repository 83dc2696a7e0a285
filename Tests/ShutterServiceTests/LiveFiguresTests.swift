// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterSim
import XCTest

/// Issue 33's figures from the real shutterd on the simulated board (1280x720, 30 fps,
/// pre-roll on): glass-to-viewer latency (the decoded frame's burned-in exposure time
/// against CLOCK_MONOTONIC when the viewer has it; p50, p99) over RTSP (ffmpeg decoding) and
/// on the page (headless chromium's shown frame), and the service's CPU and RSS with 0, 1
/// and 4 RTSP viewers against pre-roll alone, in the same run; then pre-roll off with one
/// viewer (the live encoder of its own); then pre-roll on with `live.size` 640x360 and one
/// viewer (the second, smaller encoder) against one viewer of the camera's own stream. JSON lines {"bench", "value", "unit", "reference", "ratio"}.
final class LiveFiguresTests: XCTestCase {
    private func percentile(_ xs: [Double], _ p: Double) -> Double {
        let s = xs.sorted()
        return s.isEmpty ? .nan : s[min(s.count - 1, Int((Double(s.count - 1) * p).rounded()))]
    }

    private func emit(_ name: String, _ value: Double, _ unit: String, reference: Double) {
        let ratio = reference > 0 ? String(format: "%.2f", value / reference) : "null"
        print(String(format: "{\"bench\":\"%@\",\"value\":%.2f,\"unit\":\"%@\",\"reference\":%.2f,\"ratio\":%@}",
                     name, value, unit, reference, ratio))
    }

    private func nowMillis() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
    }

    /// utime + stime (clock ticks) of a process.
    private func ticks(_ pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
        return Double(fields[11])! + Double(fields[12])!
    }

    /// The service's CPU (% of one core) over `seconds` and its RSS (MB) at the end.
    private func window(_ d: DaemonHarness, seconds: Double = 10) throws -> (cpu: Double, rssMB: Double) {
        let pid = try XCTUnwrap(d.process?.processIdentifier)
        let before = try ticks(pid), start = Date()
        usleep(UInt32(seconds * 1_000_000))  // the measuring window itself
        let after = try ticks(pid), elapsed = Date().timeIntervalSince(start)
        let rss = Double(try XCTUnwrap((try d.status()["memory"] as? [String: Any])?["residentBytes"] as? Int)) / 1_048_576
        return ((after - before) / Double(sysconf(Int32(_SC_CLK_TCK))) / elapsed * 100, rss)
    }

    private func reader(_ url: String) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        p.arguments = ["-v", "error", "-rtsp_transport", "tcp", "-i", url, "-t", "300", "-c", "copy", "-f", "null", "-"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        return p
    }

    /// ffmpeg decodes the RTSP stream for `seconds`; each frame's top rows come out as gray
    /// bytes and are stamped when whole: now − the label's exposure time.
    private func rtspLatency(_ url: String, seconds: Int) throws -> [Double] {
        let width = 1280, rows = 60
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        p.arguments = ["-v", "error", "-fflags", "nobuffer", "-flags", "low_delay", "-rtsp_transport", "tcp", "-i", url,
                       "-t", "\(seconds)", "-an", "-vf", "crop=\(width):\(rows):0:0,format=gray", "-f", "rawvideo", "-"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        var buffer = [UInt8](), latencies: [Double] = []
        let frame = width * rows
        while true {
            let data = out.fileHandleForReading.availableData
            if data.isEmpty { break }
            buffer.append(contentsOf: data)
            while buffer.count >= frame {
                let now = nowMillis()
                let luma = Array(buffer.prefix(frame))
                buffer.removeFirst(frame)
                if let l = BurnedInLabel.read(luma: luma, width: width, height: 720, stride: width) {
                    latencies.append(now - Double(l.millis))
                }
            }
        }
        p.waitUntilExit()
        return latencies.dropFirst(30).map { $0 }  // the first second: the stream's start-up burst
    }

    /// A benchmark, not a test: `make bench` runs it (SHUTTER_BENCH=1).
    func testLatencyAndWhatViewersCost() throws {
        guard ProcessInfo.processInfo.environment["SHUTTER_BENCH"] == "1" else {
            throw XCTSkip("a benchmark: run with `make bench` (SHUTTER_BENCH=1)")
        }
        let (d, base) = try LiveRTSPTests.startDaemon()
        defer { d.stop() }
        let token = try LiveRTSPTests.addToken(d, "bench")
        let url = base.replacingOccurrences(of: "rtsp://", with: "rtsp://viewer:\(token)@") + "/live"

        let rtsp = try rtspLatency(url, seconds: 20)
        XCTAssertGreaterThan(rtsp.count, 100, "labels read from the RTSP frames")
        emit("live_rtsp_glass_to_viewer_p50", percentile(rtsp, 0.5), "ms", reference: 1000.0 / 30)
        emit("live_rtsp_glass_to_viewer_p99", percentile(rtsp, 0.99), "ms", reference: 1000.0 / 30)

        let (code, text) = try WebScripts.run("test_live_browser.py", d, try WebScripts.url(d), extra: ["LATENCY_SAMPLES": "100"])
        XCTAssertEqual(code, 0, text)
        let out = URL(fileURLWithPath: WebScripts.dir).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/web-live-latency.txt").path
        var page: [Double] = [], roundTrips: [Double] = []
        for line in try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n") {
            let f = line.split(separator: " ")
            guard f.count == 5, let now = Double(f[0]), let w = Int(f[1]), let h = Int(f[2]), let trip = Double(f[4]) else { continue }
            roundTrips.append(trip)
            var bytes = [UInt8](), hex = Array(f[3].utf8), i = 0
            while i + 1 < hex.count { bytes.append(UInt8(String(decoding: hex[i...i + 1], as: UTF8.self), radix: 16) ?? 0); i += 2 }
            if let l = BurnedInLabel.read(luma: bytes, width: w, height: h * 8, stride: w) { page.append(now - Double(l.millis)) }
        }
        XCTAssertGreaterThan(page.count, 50, "labels read from the page's frames")
        emit("live_page_glass_to_viewer_p50", percentile(page, 0.5), "ms", reference: 1000.0 / 30)
        emit("live_page_glass_to_viewer_p99", percentile(page, 0.99), "ms", reference: 1000.0 / 30)
        // In the page's figure: the read back's own WebDriver round trip (an upper bound).
        emit("live_page_readback_round_trip_p50", percentile(roundTrips, 0.5), "ms", reference: 1000.0 / 30)

        // CPU and RSS: pre-roll alone, then 1 and 4 RTSP viewers, in the same run.
        let alone = try window(d)
        var readers = [try reader(url)]
        defer { readers.forEach { kill($0.processIdentifier, SIGKILL); $0.waitUntilExit() } }
        try d.waitFor("one viewer", timeout: 30) { try LiveRTSPTests.live(d)["rtspViewers"] as? Int == 1 }
        let one = try window(d)
        for _ in 0..<3 { readers.append(try reader(url)) }
        try d.waitFor("four viewers", timeout: 30) { try LiveRTSPTests.live(d)["rtspViewers"] as? Int == 4 }
        let four = try window(d)
        let live = try LiveRTSPTests.live(d)
        XCTAssertEqual(live["ownEncoder"] as? Bool, false, "pre-roll's encoder feeds the viewers: no encoder of its own")
        emit("live_cpu_preroll_alone", alone.cpu, "% of a core", reference: alone.cpu)
        emit("live_cpu_1_viewer", one.cpu, "% of a core", reference: alone.cpu)
        emit("live_cpu_4_viewers", four.cpu, "% of a core", reference: alone.cpu)
        emit("live_rss_preroll_alone", alone.rssMB, "MB", reference: alone.rssMB)
        emit("live_rss_1_viewer", one.rssMB, "MB", reference: alone.rssMB)
        emit("live_rss_4_viewers", four.rssMB, "MB", reference: alone.rssMB)
        readers.forEach { kill($0.processIdentifier, SIGTERM); $0.waitUntilExit() }
        readers = []
        d.stop()

        // Pre-roll off: nothing encodes while nobody watches; one viewer starts an encoder.
        let (o, obase) = try LiveRTSPTests.startDaemon(prerollSeconds: 0)
        defer { o.stop() }
        let otoken = try LiveRTSPTests.addToken(o, "bench")
        let idle = try window(o)
        readers = [try reader(obase.replacingOccurrences(of: "rtsp://", with: "rtsp://viewer:\(otoken)@") + "/live")]
        try o.waitFor("one viewer", timeout: 30) { try LiveRTSPTests.live(o)["rtspViewers"] as? Int == 1 }
        let watched = try window(o)
        XCTAssertEqual(try LiveRTSPTests.live(o)["ownEncoder"] as? Bool, true)
        emit("live_cpu_no_preroll_idle", idle.cpu, "% of a core", reference: alone.cpu)
        emit("live_cpu_no_preroll_1_viewer", watched.cpu, "% of a core", reference: alone.cpu)
        emit("live_rss_no_preroll_1_viewer", watched.rssMB, "MB", reference: idle.rssMB)
        readers.forEach { kill($0.processIdentifier, SIGTERM); $0.waitUntilExit() }
        readers = []
        o.stop()

        // live.size: pre-roll's full-size encoder and, while one watches, a second small one.
        let (s, sbase) = try LiveRTSPTests.startDaemon(#", "size": "640x360""#)
        defer { s.stop() }
        let stoken = try LiveRTSPTests.addToken(s, "bench")
        readers = [try reader(sbase.replacingOccurrences(of: "rtsp://", with: "rtsp://viewer:\(stoken)@") + "/live")]
        try s.waitFor("one viewer", timeout: 30) { try LiveRTSPTests.live(s)["rtspViewers"] as? Int == 1 }
        let small = try window(s)
        XCTAssertEqual(try LiveRTSPTests.live(s)["ownEncoder"] as? Bool, true, "live.size: an encoder of its own")
        emit("live_cpu_1_viewer_live_size_640x360", small.cpu, "% of a core", reference: one.cpu)
        emit("live_rss_1_viewer_live_size_640x360", small.rssMB, "MB", reference: one.rssMB)
    }
}
