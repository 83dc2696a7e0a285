// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// Issue 32's figures, from one run of the real shutterd on the simulated board and a real
/// Mosquitto: tap → `event` on a subscriber (p50, p99 over 50 taps) against the same
/// taps' socket replies, and the CPU and resident memory of a shutterd with MQTT against
/// the same shutterd without it, side by side in the same 10 s windows (idle, then both
/// recording a clip). JSON lines {"bench", "value", "unit", "reference", "ratio"}.
final class MQTTFiguresTests: XCTestCase {
    private func percentile(_ xs: [Double], _ p: Double) -> Double {
        let s = xs.sorted()
        return s[min(s.count - 1, Int((Double(s.count - 1) * p).rounded()))]
    }

    private func emit(_ name: String, _ value: Double, _ unit: String, reference: Double) {
        let ratio = reference > 0 ? String(format: "%.2f", value / reference) : "null"
        print(String(format: "{\"bench\":\"%@\",\"value\":%.2f,\"unit\":\"%@\",\"reference\":%.2f,\"ratio\":%@}",
                     name, value, unit, reference, ratio))
    }

    /// utime + stime (clock ticks) and VmRSS (KiB) of a process, from /proc.
    private func sample(_ pid: Int32) throws -> (ticks: Double, rssKB: Double) {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
            .flatMap { Double($0.split(separator: " ", omittingEmptySubsequences: true)[1]) }
        return (Double(fields[11])! + Double(fields[12])!, try XCTUnwrap(rss))
    }

    /// CPU (% of one core) and RSS (MB, at the end) of each process over `seconds`.
    private func window(_ pids: [Int32], seconds: Double) throws -> [(cpu: Double, rssMB: Double)] {
        let before = try pids.map(sample)
        let start = Date()
        usleep(UInt32(seconds * 1_000_000))  // the measuring window itself
        let after = try pids.map(sample)
        let elapsed = Date().timeIntervalSince(start)
        let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
        return zip(before, after).map { b, a in ((a.ticks - b.ticks) / hz / elapsed * 100, a.rssKB / 1024) }
    }

    /// A benchmark, not a test: `make bench` runs it (SHUTTER_BENCH=1).
    func testTapToEventAndWhatTheClientCosts() throws {
        guard ProcessInfo.processInfo.environment["SHUTTER_BENCH"] == "1" else {
            throw XCTSkip("a benchmark: run with `make bench` (SHUTTER_BENCH=1)")
        }
        let broker = try MQTTBroker()
        let top = #" "shutdown": {"taps": 0},"#
        let withMQTT = broker.config(name: "cam0", top: top)
        let withoutMQTT = withMQTT.replacingOccurrences(of: #""enabled": true"#, with: #""enabled": false"#)
        XCTAssertNotEqual(withMQTT, withoutMQTT)

        // Tap → event: from the moment shutterctl is started to mosquitto_sub printing the
        // event (its own wall-clock time, %U); the reference is the same tap's socket reply.
        let sub = try broker.subscribe("shutter/cam0/event", "shutter/cam0/availability")
        let d = try DaemonHarness(config: withMQTT)
        try d.start()
        try sub.wait("online") { $0.last { $0.topic.hasSuffix("/availability") }?.text == "online" ? true : nil }
        var toEvent: [Double] = [], toReply: [Double] = []
        for i in 0..<50 {
            let sent = Date()
            let (code, reply) = try d.ctl("tap")
            let replied = Date()
            XCTAssertEqual(code, 0, d.log())
            let file = try XCTUnwrap((reply?["files"] as? [String])?.first, "tap \(i): \(String(describing: reply))")
            let name = String(file.split(separator: "/").last!)
            let event = try sub.wait("the event of tap \(i)") { seen in
                seen.first { $0.topic == "shutter/cam0/event" && $0.json?["name"] as? String == name }
            }
            toEvent.append((event.printed ?? event.at).timeIntervalSince(sent) * 1000)
            toReply.append(replied.timeIntervalSince(sent) * 1000)
        }
        d.stop()
        XCTAssertEqual(toEvent.count, 50)
        emit("mqtt_tap_to_event_p50", percentile(toEvent, 0.5), "ms", reference: percentile(toReply, 0.5))
        emit("mqtt_tap_to_event_p99", percentile(toEvent, 0.99), "ms", reference: percentile(toReply, 0.99))

        // The client's cost: two fresh shutterd, the same configuration but for mqtt.enabled,
        // measured in the same windows.
        let clip = try broker.subscribe("shutter/cam1/event", "shutter/cam1/availability")
        let on = try DaemonHarness(config: broker.config(name: "cam1", top: top))
        let off = try DaemonHarness(config: withoutMQTT)
        try on.start()
        try off.start()
        try clip.wait("online") { $0.last { $0.topic.hasSuffix("/availability") }?.text == "online" ? true : nil }
        let pids = [on.process!.processIdentifier, off.process!.processIdentifier]
        usleep(1_000_000)  // settle after the start, as ServiceFiguresTests does
        let idle = try window(pids, seconds: 10)
        for d in [on, off] { XCTAssertEqual(try d.ctl("record", "start").0, 0, d.log()) }
        let recording = try window(pids, seconds: 10)
        for d in [on, off] {
            let (code, reply) = try d.ctl("record", "stop")
            XCTAssertEqual(code, 0, d.log())
            XCTAssertEqual((reply?["files"] as? [String])?.count, 1, "\(String(describing: reply))")
        }
        try clip.wait("the clip's event") { $0.first { $0.json?["event_type"] as? String == "clip" } }
        on.stop()
        off.stop()
        emit("mqtt_idle_cpu_percent_of_one_core", idle[0].cpu, "%", reference: idle[1].cpu)
        emit("mqtt_idle_rss", idle[0].rssMB, "MB", reference: idle[1].rssMB)
        emit("mqtt_clip_cpu_percent_of_one_core", recording[0].cpu, "%", reference: recording[1].cpu)
        emit("mqtt_clip_rss", recording[0].rssMB, "MB", reference: recording[1].rssMB)
    }
}
