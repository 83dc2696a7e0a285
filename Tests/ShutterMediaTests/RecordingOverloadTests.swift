// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import XCTest
@testable import ShutterMedia

/// An encoder that cannot keep up, on a virtual clock: 200 ms a frame against a 30 fps
/// camera (a starved CPU), and once stopped for 10 s (a card whose sync hangs). 20 s of
/// video and 48 kHz sound go through the recording queue. Video gives way (frames are
/// dropped before they are copied); not one sample of sound is dropped. (With the queue's
/// old bound, ~5 s of sound, this lost 7.6 s of it: 363,840 of 959,040 samples.)
final class RecordingOverloadTests: XCTestCase {
    func testASlowAndStalledEncoderKeepsAllTheSound() {
        let queue = RecordingQueue(frameCapacity: 12)
        let video = SyntheticVideo(width: 64, height: 48)
        let audio = SyntheticAudio(channels: 1)
        let start = MonotonicTime(nanoseconds: 1_000_000_000)
        var encoderFree = start       // when the (virtual) encoder takes its next item
        var kept = 0, audioOut = 0, chunk = 0
        let chunkNs = Int64(audio.chunkFrames) * 1_000_000_000 / 48_000
        var stalled = false

        func drain(until t: MonotonicTime) {
            while encoderFree <= t, let item = queue.tryPop() {
                switch item {
                case .video(let f):
                    kept += 1
                    queue.recycle(f)
                    encoderFree = encoderFree + .milliseconds(200)
                    if !stalled && f.timestamp >= start + .seconds(5) {
                        stalled = true
                        encoderFree = encoderFree + .seconds(10)
                    }
                case .audio(let a): audioOut += a.frameCount
                case .packet: break
                }
            }
        }
        for i in 0..<600 {
            let t = start + .nanoseconds(Int64(i) * 1_000_000_000 / 30)
            while start + .nanoseconds(Int64(chunk) * chunkNs) <= t {
                queue.push(audio: audio.chunk(index: chunk, start: start))
                chunk += 1
            }
            _ = queue.push(frame: video.frame(index: i, timestamp: t))
            drain(until: t)
        }
        queue.finish()
        drain(until: MonotonicTime(nanoseconds: .max))
        print("overload (encoder 200 ms a frame and one 10 s stall, camera 30 fps, 20 s): \(kept) frames kept, "
              + "\(queue.framesDropped) dropped; sound \(audioOut) of \(chunk * audio.chunkFrames) samples, "
              + "\(queue.audioFramesDropped) dropped")
        XCTAssertEqual(queue.audioFramesDropped, 0, "no sound dropped")
        XCTAssertEqual(audioOut, chunk * audio.chunkFrames, "every sample of sound reaches the encoder")
        XCTAssertGreaterThan(queue.framesDropped, 0, "video gave way")
    }
}
