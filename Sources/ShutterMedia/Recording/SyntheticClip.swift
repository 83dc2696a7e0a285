// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

/// Synthetic camera frames and microphone tone for recording tests, benchmarks and the
/// media tool: content that moves (so the encoder works as on a real scene), cheap to
/// produce, and optionally stamped with the frame number so a decoder can read it back.
public final class SyntheticVideo: Sendable {
    // The textures are written in init only, then only read.
    public let width: Int
    public let height: Int
    /// Horizontal pan range; the texture rows are this much wider than a frame.
    private let pan = 256
    private let luma: OwnedFrameBuffer
    private let chroma: (OwnedFrameBuffer, OwnedFrameBuffer)
    private var lumaStride: Int { width + pan }
    private var chromaStride: Int { (width + pan) / 2 }

    public init(width: Int, height: Int) {
        precondition(width % 2 == 0 && height % 2 == 0, "even sizes only")
        self.width = width
        self.height = height
        let tw = width + pan, th = height * 2
        luma = OwnedFrameBuffer(capacity: tw * th)
        chroma = (OwnedFrameBuffer(capacity: tw / 2 * th / 2), OwnedFrameBuffer(capacity: tw / 2 * th / 2))
        var seed: UInt32 = 0x1234_5678
        let y = luma.bytes.assumingMemoryBound(to: UInt8.self)
        for r in 0..<th {
            for c in 0..<tw {
                seed = seed &* 1_664_525 &+ 1_013_904_223
                let wave = (c &* 3 &+ r &* 2) / 5 + Int((seed >> 28) & 0xF)
                y[r * tw + c] = UInt8(truncatingIfNeeded: 16 + wave % 220)
            }
        }
        let u = chroma.0.bytes.assumingMemoryBound(to: UInt8.self)
        let v = chroma.1.bytes.assumingMemoryBound(to: UInt8.self)
        for r in 0..<(th / 2) {
            for c in 0..<(tw / 2) {
                u[r * tw / 2 + c] = UInt8(truncatingIfNeeded: 64 + (c / 4) % 128)
                v[r * tw / 2 + c] = UInt8(truncatingIfNeeded: 64 + (r / 4) % 128)
            }
        }
    }

    /// A panning I420 frame whose planes point into the shared texture (no copy).
    public func frame(index: Int, timestamp: MonotonicTime) -> Frame {
        let x = (index * 4) % pan, yo = (index * 2) % height
        let cx = x / 2, cy = yo / 2
        let ys = lumaStride, cs = chromaStride
        let planes = [
            FramePlane(base: UnsafeRawPointer(luma.bytes + yo * ys + x), stride: ys, length: ys * (height - 1) + width),
            FramePlane(base: UnsafeRawPointer(chroma.0.bytes + cy * cs + cx), stride: cs,
                       length: cs * (height / 2 - 1) + width / 2),
            FramePlane(base: UnsafeRawPointer(chroma.1.bytes + cy * cs + cx), stride: cs,
                       length: cs * (height / 2 - 1) + width / 2),
        ]
        return Frame(width: width, height: height, format: .i420, planes: planes, timestamp: timestamp,
                     sequence: UInt64(index), onRelease: { withExtendedLifetime(self) {} })
    }

    /// A tightly packed copy of `frame(index:)` with `index` written as 16 black/white
    /// blocks across the top 16 rows (bit 15 first), readable after lossy encoding.
    public func stampedFrame(index: Int, timestamp: MonotonicTime) -> Frame {
        let buffer = OwnedFrameBuffer(capacity: Frame.i420ByteCount(width: width, height: height))
        writePacked(index: index, into: buffer.bytes.assumingMemoryBound(to: UInt8.self))
        let block = width / 16
        let y = buffer.bytes.assumingMemoryBound(to: UInt8.self)
        for bit in 0..<16 {
            let on = (index >> (15 - bit)) & 1 == 1
            for r in 0..<min(16, height) {
                for c in (bit * block)..<((bit + 1) * block) { y[r * width + c] = on ? 235 : 16 }
            }
        }
        return Frame.i420(width: width, height: height, buffer: buffer, timestamp: timestamp,
                          sequence: UInt64(index))
    }

    /// Reads the stamp of a decoded gray (Y) frame of this size.
    public static func readStamp(gray: UnsafeBufferPointer<UInt8>, width: Int) -> Int {
        let block = width / 16
        var value = 0
        for bit in 0..<16 {
            let sample = Int(gray[8 * width + bit * block + block / 2])
            value = value << 1 | (sample > 128 ? 1 : 0)
        }
        return value
    }

    /// The frame's three planes, tightly packed (I420), as ffmpeg's rawvideo yuv420p reads them.
    public func writePacked(index: Int, into out: UnsafeMutablePointer<UInt8>) {
        let f = frame(index: index, timestamp: MonotonicTime(nanoseconds: 0))
        var o = out
        for (i, p) in f.planes.enumerated() {
            let w = i == 0 ? width : width / 2, h = i == 0 ? height : height / 2
            for r in 0..<h {
                (o + r * w).update(from: p.base.assumingMemoryBound(to: UInt8.self) + r * p.stride, count: w)
            }
            o += w * h
        }
    }
}

/// A sine tone from a microphone that keeps perfect time: chunk k starts at sample k·n.
public struct SyntheticAudio: Sendable {
    public let sampleRate: Int
    public let channels: Int
    public let chunkFrames: Int
    private let table: [Int16]

    public init(sampleRate: Int = 48_000, channels: Int = 1, chunkFrames: Int = 960, frequency: Int = 1_000) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.chunkFrames = chunkFrames
        // One second of tone: any whole number of Hz loops seamlessly.
        table = (0..<sampleRate).map { i in
            Int16(12_000 * sin(2 * Double.pi * Double(frequency) * Double(i) / Double(sampleRate)))
        }
    }

    /// Chunk `index` of the tone; `start` is the time of sample 0.
    public func chunk(index: Int, start: MonotonicTime, droppedFramesBefore: Int = 0) -> AudioChunk {
        var samples = [Int16](repeating: 0, count: chunkFrames * channels)
        let first = index * chunkFrames
        for i in 0..<chunkFrames {
            let s = table[(first + i) % sampleRate]
            for c in 0..<channels { samples[i * channels + c] = s }
        }
        let ns = Int64(first) * 1_000_000_000 / Int64(sampleRate)
        return AudioChunk(samples: samples, channels: channels, sampleRate: sampleRate,
                          timestamp: MonotonicTime(nanoseconds: start.nanoseconds + ns),
                          droppedFramesBefore: droppedFramesBefore)
    }
}
