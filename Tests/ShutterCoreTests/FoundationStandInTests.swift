// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
@testable import ShutterCore

/// What the service's modules use instead of full Foundation (issue 31: shutterd links
/// no ICU) gives what Foundation's calls gave: printf numbers as String(format:), NSString's
/// path calls, ISO8601DateFormatter's text, trimming with NUL, Codable JSON as JSONEncoder and
/// JSONDecoder, and locks, conditions and
/// named threads that do their job.
final class FoundationStandInTests: XCTestCase {
    func testCFormatPrintsWhatStringFormatPrinted() {
        // The service's own formats (RecordingSettings, RecordingPipeline, Health) and edges.
        let doubles: [Double] = [0, 1.23456, -1.0005, 2.25, 0.0005, 0.0015, 1e9 / 3, 123_456.789, 1e-7, 31.95, 4.05]
        for d in doubles {
            XCTAssertEqual(cFormat("%.3f", d), String(format: "%.3f", d), "\(d)")
            XCTAssertEqual(cFormat(", %.1f GB free", d), String(format: ", %.1f GB free", d), "\(d)")
        }
        let iso = "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ"
        for v in [[2026, 12, 3, 6, 30, 52, 123_456], [1970, 1, 1, 0, 0, 0, 0], [99, 9, 9, 9, 9, 9, 999_999]] {
            XCTAssertEqual(cFormat(iso, v[0], v[1], v[2], v[3], v[4], v[5], v[6]),
                           String(format: iso, v[0], v[1], v[2], v[3], v[4], v[5], v[6]))
        }
        XCTAssertEqual(cFormat("%d|%5d|%-3d|%x|%%", 42, -7, 1, 255), String(format: "%d|%5d|%-3d|%x|%%", 42, -7, 1, 255))
        // Longer than the first buffer: the second pass.
        let long = String(repeating: "x", count: 300) + "%d"
        XCTAssertEqual(cFormat(long, 12345), String(format: long, 12345))
    }

    func testPathCallsMatchNSString() {
        // Foundation 6.3's deletingLastPathComponent traps on a relative path of one
        // component ("a", "a/"): those are compared with what NSString gives a parent path.
        let paths = ["", "/", "/a", "/a/", "/a/b", "/a/b/", "a/b", "a//b", "/a//b//", "//a", "/x/.hidden",
                     "/x/y.tar.gz", "/x/y.", "/x/..", "a/b.c/d", "/var/lib/shutter/DCIM/100SHUTR/SHTR0001.MP4",
                     "shutter-data/DCIM/100SHUTR/.SHTR0002.MP4.tmp-41"]
        for p in paths {
            let n = p as NSString
            XCTAssertEqual(PlainIO.lastComponent(p), n.lastPathComponent, p)
            XCTAssertEqual(PlainIO.deletingLastComponent(p), n.deletingLastPathComponent, p)
            XCTAssertEqual(PlainIO.pathExtension(p), n.pathExtension, p)
            XCTAssertEqual(PlainIO.deletingPathExtension(p), n.deletingPathExtension, p)
        }
        for p in ["a", "a.b", "a.", ".", "..", "shutter-data", "shutter-data/", ".hidden"] {
            let n = p as NSString
            XCTAssertEqual(PlainIO.lastComponent(p), n.lastPathComponent, p)
            XCTAssertEqual(PlainIO.deletingLastComponent(p), "", p)
            XCTAssertEqual(PlainIO.pathExtension(p), n.pathExtension, p)
            XCTAssertEqual(PlainIO.deletingPathExtension(p), n.deletingPathExtension, p)
        }
        for (dir, name) in [("", "x"), ("/", "x"), ("a", "x"), ("a/", "x"), ("a//", "x"), ("a", "x/"), ("a", "/x"),
                            ("a", ""), ("/a", ".."), ("a", "x/y"), ("/var/lib/shutter", "DCIM")] {
            XCTAssertEqual(PlainIO.path(dir, name), (dir as NSString).appendingPathComponent(name), "\(dir) + \(name)")
        }
    }

    func testISO8601TextIsWhatTheFormatterWrote() {
        let f = ISO8601DateFormatter()
        for t in [0, 1_764_743_452, 1_764_743_452.75, 1_764_743_452.999_9, 1_764_743_452.999_4,
                  1_764_743_452.999_6, 1_764_743_452.000_4, 951_782_400, 4_102_444_799, 86_399.5, 59.9996] as [Double] {
            XCTAssertEqual(ISO8601Text.utc(t), f.string(from: Date(timeIntervalSince1970: t)), "\(t)")
        }
    }

    func testTrimmingWithNULMatchesFoundation() {
        let set = CharacterSet(charactersIn: "\u{0}").union(.whitespacesAndNewlines)
        for s in ["Raspberry Pi 5 Model B Rev 1.0\u{0}", "\u{0}\u{0} x \n\u{0}", "", "\u{0}", "a\u{0}b", " \u{2028}c\u{0}\t"] {
            XCTAssertEqual(s.trimmedWhitespaceAndNUL, s.trimmingCharacters(in: set), "\(s.unicodeScalars.map(\.value))")
        }
    }

    func testLockAndConditionHandOverAcrossNamedThreads() {
        let lock = PlainLock()
        let cond = PlainCondition()
        final class Box: @unchecked Sendable { var count = 0; var ready = false; var name = "" }
        let box = Box()
        let threads = 4, rounds = 2_000
        let done = expectation(description: "threads")
        done.expectedFulfillmentCount = threads
        for i in 0..<threads {
            PlainThread.start(name: "shutter.test.\(i)") {
                for _ in 0..<rounds { lock.lock(); box.count += 1; lock.unlock() }
                done.fulfill()
            }
        }
        wait(for: [done], timeout: 60)
        lock.lock()
        XCTAssertEqual(box.count, threads * rounds)
        lock.unlock()

        // The waiter sees the flag set under the condition's lock, and its thread has its name
        // (the kernel keeps 15 bytes).
        PlainThread.start(name: "shutter.test.waiter-long-name") {
            var comm = [CChar](repeating: 0, count: 64)
            let fd = open("/proc/thread-self/comm", O_RDONLY)
            if fd >= 0 { _ = read(fd, &comm, 63); close(fd) }
            cond.lock()
            box.name = String(decoding: comm.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                .trimmingCharacters(in: .newlines)
            box.ready = true
            cond.signal()
            cond.unlock()
        }
        cond.lock()
        while !box.ready { XCTAssertTrue(cond.wait(seconds: 60)) }
        cond.unlock()
        XCTAssertEqual(box.name, "shutter.test.wa")
        // Nobody signals: the deadline passes and wait says so (a spurious wake-up says true).
        cond.lock()
        var timedOut = false
        for _ in 0..<1_000 where !timedOut { timedOut = !cond.wait(seconds: 0.05) }
        cond.unlock()
        XCTAssertTrue(timedOut)
    }
}
