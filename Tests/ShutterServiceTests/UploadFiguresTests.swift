// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest

/// `make bench` (`--filter UploadTests.testUploadFigures`): the uploads' figures on loopback
/// against `rclone serve sftp` (40 photos and three 5 s 1080p clips), printed as
/// `upload-figures` JSON lines: throughput against `rclone copy` of the same files to the
/// same server in the same run (`throughput_ratio`: each one's own elapsed time, rclone's
/// stats against the uploader's batch lines, start-ups and status polls left out;
/// `wall_ratio`: the test's clock around both) (a small batch unthrottled, where rclone's start-ups show, and
/// at 4 MB/s, a link's pace; a backlog with 20 s clips at 4 MB/s); what shutterd adds in CPU and memory while the connector uploads; and the
/// time from a photo's durable point to its verified copy (p50, p99) at a photo a second.
extension UploadTests {
    func testUploadFigures() throws {
        guard ProcessInfo.processInfo.environment["SHUTTER_BENCH"] == "1" else {
            throw XCTSkip("a benchmark: make bench runs it (SHUTTER_BENCH=1)")
        }
        let t = self
        // (name, bandwidth, clip seconds): a small batch, where rclone's start-ups show, at
        // full speed and at 4 MB/s (a link's pace); and a backlog (a day's three 20 s clips and
        // 40 photos) at 4 MB/s, where what a batch sends dominates.
        let rows: [(String, String, Int)] = [("small batch", "", 5), ("small batch", "4M", 5), ("backlog", "4M", 20)]
        for (row, limit, seconds) in rows {
            let remote = try UploadRemote(.sftp)
            let extra = limit.isEmpty ? "" : ", \"bandwidth\": \"\(limit)\""
            let d = try t.daemon(remote, upload: extra, connector: true, video: "\"width\": 1920, \"height\": 1080")
            defer { d.stop() }
            // The connector runs first, paused (as installed: it is always there); its start-up
            // is not the uploads' time.
            let c = try t.startConnector(d, ["--log-level", "debug"])
            defer { c.terminate(); c.waitUntilExit() }
            try d.waitFor("the connector's report", timeout: 60) { try d.status()["upload"] != nil }
            XCTAssertEqual(try d.ctl("upload", "pause").0, 0)
            try d.waitFor("the uploads paused", timeout: 30) { try t.upload(d)["paused"] as? Bool == true }
            for _ in 0..<40 { XCTAssertEqual(try d.ctl("tap").0, 0) }
            for _ in 0..<3 { XCTAssertEqual(try d.ctl("hold", "\(seconds)").0, 0) }
            let megabytes = Double((try FileManager.default.contentsOfDirectory(atPath: d.storage + "/DCIM/100SHUTR"))
                .compactMap { try? FileManager.default.attributesOfItem(atPath: d.storage + "/DCIM/100SHUTR/" + $0)[.size] as? Int }
                .reduce(0, +)) / 1_048_576
            let bytes = try t.card(d).keys.count
            let folder = d.storage + "/DCIM/100SHUTR"
            // The reference: rclone copy of the same files to the same server, at the priority
            // the uploads' rclone runs at (nice 19, idle I/O: on a busy machine either gets
            // only what is left over).
            var args = ["-n", "19", "ionice", "-c", "3", "/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=\(remote.dir)",
                        UploadRemote.rclone, "--config", remote.config, "copy", folder, "r:reference", "--transfers", "2"]
            if !limit.isEmpty { args += ["--bwlimit", limit] }
            // Its own elapsed time too (its stats, as JSON), beside the wall clock's.
            args += ["--use-json-log", "-v", "--stats-log-level", "NOTICE", "--stats", "1h"]
            let r0 = Date()
            let (code, _, err) = try runTool("/usr/bin/nice", args)
            XCTAssertEqual(code, 0, err)
            let reference = Date().timeIntervalSince(r0)
            let referenceReported = try XCTUnwrap(Self.rcloneElapsed(err), "rclone copy's stats: \(err.suffix(800))")
            let logBefore = (try? FileManager.default.attributesOfItem(atPath: d.dir + "/connector.log")[.size] as? Int) ?? 0
            // Ours: from `upload resume` to every file verified.
            let before = try Self.cpuSeconds(d.process!.processIdentifier)
            let rssBefore = try Self.rssMB(d.process!.processIdentifier)
            let o0 = Date()
            XCTAssertEqual(try d.ctl("upload", "resume").0, 0)
            try t.waitVerified(d, bytes, timeout: 600)
            let ours = Date().timeIntervalSince(o0)
            let added = try Self.cpuSeconds(d.process!.processIdentifier) - before
            let rssAfter = try Self.rssMB(d.process!.processIdentifier)
            let connectorRSS = try Self.rssMB(c.processIdentifier)
            // The uploader's own time: its batches' "done in" lines since the resume.
            let log = try String(contentsOfFile: d.dir + "/connector.log", encoding: .utf8).utf8.dropFirst(logBefore)
            let oursReported = Self.batchSeconds(String(decoding: log, as: UTF8.self))
            XCTAssertGreaterThan(oursReported, 0, "the connector logs its batches' times")
            for line in String(decoding: log, as: UTF8.self).split(separator: "\n") where line.contains(") done in ") {
                print("upload-figures \(row) \(limit.isEmpty ? "none" : limit): \(line.drop { $0 != "b" })")
            }
            print("{\"bench\": \"upload-figures\", \"row\": \"\(row)\", \"files\": \(bytes), \"megabytes\": \(String(format: "%.1f", megabytes)), \"bwlimit\": \"\(limit.isEmpty ? "none" : limit)\", "
                  + "\"rclone_copy_s\": \(String(format: "%.2f", reference)), \"shutter_s\": \(String(format: "%.2f", ours)), "
                  + "\"wall_ratio\": \(String(format: "%.2f", reference / ours)), "
                  + "\"rclone_reported_s\": \(String(format: "%.3f", referenceReported)), \"shutter_reported_s\": \(String(format: "%.3f", oursReported)), "
                  + "\"throughput_ratio\": \(String(format: "%.2f", referenceReported / oursReported)), "
                  + "\"shutterd_added_cpu_s\": \(String(format: "%.2f", added)), "
                  + "\"shutterd_rss_mb\": [\(String(format: "%.1f", rssBefore)), \(String(format: "%.1f", rssAfter))], "
                  + "\"connector_rss_mb\": \(String(format: "%.1f", connectorRSS))}")
            if row == "small batch" && limit.isEmpty {
                // A photo a second: its durable point (the file's time) to its verified copy.
                var latencies: [Double] = []
                for _ in 0..<30 {
                    XCTAssertEqual(try d.ctl("tap").0, 0)
                    Thread.sleep(forTimeInterval: 1)
                }
                try t.waitVerified(d, bytes + 30, timeout: 300)
                for name in try FileManager.default.contentsOfDirectory(atPath: d.storage + "/.upload") where name.hasSuffix(".json") {
                    let data = try Data(contentsOf: URL(fileURLWithPath: d.storage + "/.upload/" + name))
                    let r = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
                    guard let n = Int(name.dropLast(5)), n > 1_000_000 + bytes,
                          let verified = r["verifiedAt"] as? Double, let modified = r["modified"] as? Double else { continue }
                    latencies.append(Double(verified) - Double(modified))
                }
                latencies.sort()
                XCTAssertEqual(latencies.count, 30)
                let p50 = latencies[latencies.count / 2], p99 = latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
                print("{\"bench\": \"upload-latency\", \"photos\": \(latencies.count), \"p50_s\": \(String(format: "%.2f", p50)), "
                      + "\"p99_s\": \(String(format: "%.2f", p99))}")
            }
        }
    }

    /// rclone's own elapsed seconds: the last `elapsedTime` of its JSON stats lines.
    static func rcloneElapsed(_ log: String) -> Double? {
        log.split(separator: "\n").reversed().lazy.compactMap { line -> Double? in
            guard let data = line.data(using: .utf8),
                  let o = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let stats = o["stats"] as? [String: Any] else { return nil }
            return stats["elapsedTime"] as? Double
        }.first
    }

    /// The sum of the uploader's "batch of N files (B bytes) done in T s" lines.
    static func batchSeconds(_ log: String) -> Double {
        log.split(separator: "\n").reduce(0) { sum, line in
            guard let r = line.range(of: ") done in ") else { return sum }
            return sum + (Double(line[r.upperBound...].prefix { $0 != " " }) ?? 0)
        }
    }

    static func cpuSeconds(_ pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat.split(separator: ")").last!.split(separator: " ")
        return (Double(fields[11])! + Double(fields[12])!) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func rssMB(_ pid: Int32) throws -> Double {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
    }
}
