// SPDX-License-Identifier: BSD-2-Clause
import XCTest
import ShutterCore
@testable import ShutterMedia

/// The pre-roll ring's bounds and choices, on plain packets (no encoder needed).
final class PrerollRingTests: XCTestCase {
    struct P: PrerollPacket {
        var time: MonotonicTime
        var isKey: Bool
        var bytes: Int
    }

    private func ms(_ v: Int64) -> MonotonicTime { MonotonicTime(nanoseconds: v * 1_000_000) }

    /// 30 fps from t = 10 s, a keyframe every `gop` frames, `size` bytes each (keyframes 4x).
    private func fill(_ ring: inout PrerollRing<P>, frames: Int, gop: Int, size: Int = 1000, from first: Int = 0) {
        for i in first..<(first + frames) {
            let t = ms(10_000 + Int64(i) * 1000 / 30)
            ring.push(P(time: t, isKey: i % gop == 0, bytes: i % gop == 0 ? 4 * size : size))
        }
    }

    func testStartsAtAKeyframeAndKeepsTheRetainedTimeFromTheLastKeyframeBeforeIt() {
        var ring = PrerollRing<P>(retain: .seconds(3), byteLimit: 1 << 30)
        // Packets before the first keyframe cannot start a file: not kept.
        ring.push(P(time: ms(9_000), isKey: false, bytes: 10))
        XCTAssertTrue(ring.video.isEmpty)
        fill(&ring, frames: 300, gop: 5)  // 10 s
        XCTAssertTrue(ring.video.first!.isKey)
        let newest = ring.video.last!.time
        XCTAssertLessThanOrEqual(ring.video.first!.time, newest - .seconds(3), "at least the retained time")
        XCTAssertGreaterThan(ring.video.first!.time, newest - .seconds(3) - .milliseconds(167),
                             "no more than one keyframe interval beyond it")
        XCTAssertEqual(ring.heldSeconds, 3.0, accuracy: 0.2)
        XCTAssertEqual(ring.videoBytes, ring.video.reduce(0) { $0 + $1.bytes })
        XCTAssertEqual(ring.capEvictions, 0)
    }

    func testTheByteBoundDropsWholeKeyframeIntervalsFromTheFront() {
        // 30 fps, GOP 5: 8000 bytes a GOP; 3 s would be 48 000 bytes. Cap at 20 000.
        var ring = PrerollRing<P>(retain: .seconds(3), byteLimit: 20_000)
        fill(&ring, frames: 300, gop: 5)
        XCTAssertLessThanOrEqual(ring.bytes, 20_000, "never above the bound")
        XCTAssertGreaterThan(ring.capEvictions, 0)
        XCTAssertTrue(ring.video.first!.isKey, "still starts at a keyframe")
        XCTAssertEqual(ring.video.last!.time, ms(10_000 + 299 * 1000 / 30), "the newest packet is kept")
        XCTAssertEqual(ring.videoBytes, ring.video.reduce(0) { $0 + $1.bytes })
        // A single GOP larger than the bound leaves nothing rather than a broken start.
        var tiny = PrerollRing<P>(retain: .seconds(3), byteLimit: 3000)
        fill(&tiny, frames: 30, gop: 5)
        XCTAssertLessThanOrEqual(tiny.bytes, 3000)
        XCTAssertTrue(tiny.video.first?.isKey ?? true)
    }

    func testTheClipStartsAtTheKeyframeNearestTheTarget() throws {
        var ring = PrerollRing<P>(retain: .seconds(4), byteLimit: 1 << 30)
        fill(&ring, frames: 300, gop: 5)  // keyframes every 166.7 ms
        for offset in stride(from: 0, to: 500, by: 7) {
            let target = ms(17_000 + Int64(offset))
            let clip = try XCTUnwrap(ring.clip(from: target))
            let start = clip.video.first!.time
            XCTAssertTrue(clip.video.first!.isKey)
            XCTAssertLessThanOrEqual(abs((start - target).nanoseconds), 84_000_000, "within half a keyframe interval")
            XCTAssertEqual(clip.video.last!.time, ring.video.last!.time, "and on to the newest packet")
        }
    }

    func testAudioIsKeptFromTheFirstVideoPacketAndRebasedToTheStartKeyframe() throws {
        var ring = PrerollRing<P>(retain: .seconds(2), byteLimit: 1 << 30)
        // 20 ms chunks of 48 kHz mono, sample k = k (to see where it was cut).
        // Interleaved as they arrive: each 20 ms chunk, then the frames up to its end.
        var k: Int16 = 0
        var frame = 0
        for i in 0..<500 {  // 10 s
            let samples = (0..<960).map { _ in defer { k &+= 1 }; return k }
            ring.push(AudioChunk(samples: samples, channels: 1, sampleRate: 48_000, timestamp: ms(10_000 + Int64(i) * 20)))
            while frame < 300, Int64(frame) * 1000 / 30 < Int64(i + 1) * 20 {
                fill(&ring, frames: 1, gop: 5, from: frame)
                frame += 1
            }
        }
        let first = ring.video.first!.time
        XCTAssertLessThanOrEqual(ring.audio.first!.timestamp, first, "audio covers the first packet")
        XCTAssertGreaterThan(audioEnd(ring.audio.first!), first, "and no chunk ends before it")
        let clip = try XCTUnwrap(ring.clip(from: ms(17_000)))
        let start = clip.video.first!.time
        XCTAssertLessThanOrEqual(clip.audio.first!.timestamp, start)
        XCTAssertGreaterThan(audioEnd(clip.audio.first!), start)
        // On the clip's timeline (origin = the start keyframe) the sample at the keyframe
        // gets pts 0: earlier samples are negative (the writer cuts them).
        var timeline = AudioTimeline(rate: 48_000, channels: 1)
        for a in clip.audio { XCTAssertTrue(timeline.add(a)) }
        let pts = timeline.index(of: start) + timeline.offset(for: start)
        XCTAssertEqual(pts, 0, accuracy: 1, "the keyframe's time is sample 0 of the clip")
    }
}
