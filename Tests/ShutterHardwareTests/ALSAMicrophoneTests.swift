// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import XCTest
@testable import ShutterHardware

/// Real alsa-lib capture through its `file` plugin: the PCM reads a raw S16_LE
/// file we generate (a `null` slave gives the capture stream; it is not paced
/// in real time), so the samples that come out must be exactly the file's.
final class ALSAMicrophoneTests: XCTestCase {
    static let dir = FileManager.default.temporaryDirectory.appendingPathComponent("alsa-tests-\(getpid())")
    static let rate = 48_000
    static let monoFrames = 24_000 + 333           // not a multiple of the period
    static let stereoFrames = 12_000 + 77

    override class func setUp() {
        super.setUp()
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try? write(tone(frames: monoFrames, channels: 1), to: "mono.raw")
        try? write(tone(frames: stereoFrames, channels: 2), to: "stereo.raw")
        var conf = ""
        for name in ["mono", "stereo"] {
            conf += """
            pcm.file\(name) { type file slave.pcm "null" file "/dev/null" \
            infile "\(dir.path)/\(name).raw" format "raw" }

            """
        }
        try? conf.write(to: dir.appendingPathComponent("asound.conf"), atomically: true, encoding: .utf8)
        // alsa-lib reads its configuration on first use; the test PCMs are added to the stock one.
        setenv("ALSA_CONFIG_PATH", "/usr/share/alsa/alsa.conf:\(dir.path)/asound.conf", 1)
    }

    override class func tearDown() {
        try? FileManager.default.removeItem(at: dir)
        super.tearDown()
    }

    /// A 440 Hz tone (right channel 660 Hz), every sample distinct enough to catch a shift.
    static func tone(frames: Int, channels: Int) -> [Int16] {
        var out: [Int16] = []
        out.reserveCapacity(frames * channels)
        for i in 0..<frames {
            for c in 0..<channels {
                let f = c == 0 ? 440.0 : 660.0
                out.append(Int16(12_000 * sin(2 * Double.pi * f * Double(i) / Double(rate))) &+ Int16(i % 7))
            }
        }
        return out
    }

    static func write(_ samples: [Int16], to name: String) throws {
        let data = samples.withUnsafeBytes { Data($0) } // S16_LE on this little-endian machine
        try data.write(to: dir.appendingPathComponent(name))
    }

    /// Reads chunks until `frames` frames arrived (or the stream ended).
    private func collect(_ stream: AsyncStream<AudioChunk>, frames: Int) async -> [AudioChunk] {
        var chunks: [AudioChunk] = []
        var total = 0
        for await chunk in stream {
            chunks.append(chunk)
            total += chunk.frameCount
            if total >= frames { break }
        }
        return chunks
    }

    func testMonoCaptureReturnsExactlyTheTone() async throws {
        let mic = ALSAMicrophone(device: "filemono", periodFrames: 1024)
        let stream = try mic.start(sampleRate: Self.rate, channels: 1)
        let chunks = await collect(stream, frames: Self.monoFrames)
        mic.stop()
        let samples = chunks.flatMap(\.samples)
        let expected = Self.tone(frames: Self.monoFrames, channels: 1)
        XCTAssertGreaterThanOrEqual(samples.count, expected.count)
        XCTAssertEqual(Array(samples.prefix(expected.count)), expected, "captured samples differ from the tone")
        XCTAssertEqual(mic.grantedSampleRate ?? Self.rate, Self.rate)
        for chunk in chunks {
            XCTAssertEqual(chunk.channels, 1)
            XCTAssertEqual(chunk.sampleRate, Self.rate)
            XCTAssertEqual(chunk.droppedFramesBefore, 0)
        }
        assertTimestampsSane(chunks)
        XCTAssertEqual(mic.overruns, 0)
        XCTAssertNil(mic.endReason)
    }

    func testStereoCaptureReturnsExactlyTheInterleavedTone() async throws {
        let mic = ALSAMicrophone(device: "filestereo", periodFrames: 512)
        let stream = try mic.start(sampleRate: Self.rate, channels: 2)
        let chunks = await collect(stream, frames: Self.stereoFrames)
        mic.stop()
        let expected = Self.tone(frames: Self.stereoFrames, channels: 2)
        XCTAssertEqual(Array(chunks.flatMap(\.samples).prefix(expected.count)), expected)
        XCTAssertTrue(chunks.allSatisfy { $0.channels == 2 && $0.samples.count % 2 == 0 })
        assertTimestampsSane(chunks)
    }

    func testSlowConsumerDropsAreCountedExactly() async throws {
        // A 4-chunk buffer and a consumer that reads nothing until the microphone says it
        // dropped chunks (its own counter; 30 s at most, a bound on the wait): the next
        // delivered chunk says how many frames are missing, so its position is known.
        let period = 256
        let mic = ALSAMicrophone(device: "filemono", periodFrames: period, bufferedChunks: 4)
        let stream = try mic.start(sampleRate: Self.rate, channels: 1)
        let bound = ContinuousClock.now + .seconds(30)
        while mic.droppedChunks == 0, ContinuousClock.now < bound { try await Task.sleep(for: .milliseconds(5)) }
        XCTAssertGreaterThan(mic.droppedChunks, 0, "chunks dropped while nothing was read")
        var it = stream.makeAsyncIterator()
        var position = 0
        var sawDrop = false
        let tone = Self.tone(frames: Self.monoFrames, channels: 1)
        for _ in 0..<6 {
            guard let chunk = await it.next() else { break }
            if chunk.droppedFramesBefore > 0 { sawDrop = true }
            position += chunk.droppedFramesBefore
            // The file plugin reads the file once, then the null slave's silence.
            let expected = (position..<(position + chunk.frameCount)).map { $0 < tone.count ? tone[$0] : 0 }
            XCTAssertEqual(chunk.samples, expected, "chunk at frame \(position)")
            position += chunk.frameCount
        }
        mic.stop()
        XCTAssertTrue(sawDrop)
        XCTAssertGreaterThan(mic.droppedChunks, 0)
    }

    func testStopEndsTheStreamAndTheDeviceCanBeReopened() async throws {
        let mic = ALSAMicrophone(device: "filemono")
        let first = try mic.start(sampleRate: Self.rate, channels: 1)
        mic.stop()
        var count = 0
        for await _ in first { count += 1 } // must terminate
        XCTAssertLessThanOrEqual(count, 256)
        let second = try mic.start(sampleRate: Self.rate, channels: 1)
        let chunks = await collect(second, frames: 1024)
        mic.stop()
        XCTAssertEqual(Array(chunks.flatMap(\.samples).prefix(1024)),
                       Array(Self.tone(frames: 1024, channels: 1)), "a new session starts the file again")
    }

    func testMissingDeviceGivesClearError() {
        for name in ["shutter_no_such_pcm", "hw:7,0", "plughw:CARD=NoSuchCard"] {
            XCTAssertThrowsError(try ALSAMicrophone(device: name).start(sampleRate: 48_000, channels: 1)) { error in
                guard let e = error as? ALSAError else { return XCTFail("untyped error \(error)") }
                XCTAssertEqual(e.code, .noCaptureDevice, "\(name): \(e)")
                XCTAssertTrue(e.message.contains(name), e.message)
                XCTAssertTrue(e.message.contains("arecord -l"), e.message)
            }
        }
    }

    func testAutoWithoutAUSBCardSaysSo() throws {
        if ALSACaptureDevices.list().contains(where: \.isUSB) { throw XCTSkip("a USB sound card is present") }
        XCTAssertThrowsError(try ALSAMicrophone(device: "auto").start(sampleRate: 48_000, channels: 1)) { error in
            let e = error as? ALSAError
            XCTAssertEqual(e?.code, .noCaptureDevice)
            XCTAssertTrue(e?.message.contains("USB microphone") ?? false, "\(error)")
        }
    }

    func testBadChannelCountIsRejectedBeforeOpening() {
        XCTAssertThrowsError(try ALSAMicrophone(device: "filemono").start(sampleRate: 48_000, channels: 6)) {
            XCTAssertEqual(($0 as? ALSAError)?.code, .unsupportedFormat)
        }
    }

    private func assertTimestampsSane(_ chunks: [AudioChunk], file: StaticString = #filePath, line: UInt = #line) {
        let now = SystemClock().now()
        for (a, b) in zip(chunks, chunks.dropFirst()) {
            XCTAssertLessThanOrEqual(a.timestamp, b.timestamp, "timestamps go backwards", file: file, line: line)
        }
        // On CLOCK_MONOTONIC (not the wall clock): within the last minute of this process.
        if let first = chunks.first {
            XCTAssertLessThanOrEqual(first.timestamp, now, file: file, line: line)
            XCTAssertGreaterThan(first.timestamp, now - .seconds(60), file: file, line: line)
        }
    }
}
