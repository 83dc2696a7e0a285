// SPDX-License-Identifier: BSD-2-Clause
// bench-still: a 12 MP (4608x2592, Camera Module 3) I420 frame to a finished JPEG
// with EXIF and thumbnail, in memory (no fsync), against bare libjpeg-turbo
// (tjCompressFromYUVPlanes of the same planes, same quality, preallocated output)
// in the same run. Prints JSON lines; target ratio <= 1.15. Then the time stamp's cost
// per 1080p frame and per 12 MP still (OverlayBench.swift).
#if canImport(Glibc)
import Glibc
#endif
import CTurboJPEG
import ShutterCore
import ShutterMedia
import ShutterStorage

let width = 4608, height = 2592, quality = 93
let iterations = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 9

func nowNs() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// Sensor-like content: smooth gradients, some edges, low-amplitude noise, so
/// the JPEG is camera-sized rather than trivially flat or incompressible.
func fillScene(y: UnsafeMutablePointer<UInt8>, u: UnsafeMutablePointer<UInt8>, v: UnsafeMutablePointer<UInt8>,
               width w: Int, height h: Int) {
    var seed: UInt64 = 42
    func noise() -> Int {
        seed = seed &* 6364136223846793005 &+ 1442695040888963407
        return Int(truncatingIfNeeded: (seed >> 60)) - 8  // -8...7
    }
    for r in 0..<h {
        for c in 0..<w {
            let base = (c * 160 / w) + (r * 80 / h) + ((c / 96 + r / 96) % 2 == 0 ? 0 : 12)
            y[r * w + c] = UInt8(clamping: base + noise())
        }
    }
    let cw = w / 2, ch = h / 2
    for r in 0..<ch {
        for c in 0..<cw {
            u[r * cw + c] = UInt8(clamping: 110 + c * 40 / cw + noise() / 2)
            v[r * cw + c] = UInt8(clamping: 140 - r * 40 / ch + noise() / 2)
        }
    }
}

let ySize = width * height, cSize = (width / 2) * (height / 2)
let buffer = OwnedFrameBuffer(capacity: Frame.i420ByteCount(width: width, height: height))
let yP = buffer.bytes.assumingMemoryBound(to: UInt8.self)
fillScene(y: yP, u: yP + ySize, v: yP + ySize + cSize, width: width, height: height)
let frame = Frame.i420(width: width, height: height, buffer: buffer, timestamp: .milliseconds(0), sequence: 0)

// The same pixels as NV12 (a second buffer, interleaved chroma) for the NV12 path.
let nv12Buffer = OwnedFrameBuffer(capacity: ySize + 2 * cSize)
let nvP = nv12Buffer.bytes.assumingMemoryBound(to: UInt8.self)
nvP.update(from: yP, count: ySize)
for i in 0..<cSize {
    nvP[ySize + 2 * i] = yP[ySize + i]
    nvP[ySize + 2 * i + 1] = yP[ySize + cSize + i]
}
let nv12 = Frame(width: width, height: height, format: .nv12,
                 planes: [FramePlane(base: UnsafeRawPointer(nvP), stride: width, length: ySize),
                          FramePlane(base: UnsafeRawPointer(nvP + ySize), stride: width, length: 2 * cSize)],
                 timestamp: .milliseconds(0), sequence: 0, onRelease: { withExtendedLifetime(nv12Buffer) {} })

let metadata = StillMetadata(make: "Raspberry Pi", model: "Camera Module 3", software: "Shutter bench",
                             captureTime: SystemWallClock().now(), exposureTimeMicroseconds: 16_666,
                             analogueGain: 2.0, digitalGain: 1.0, focalLengthMillimetres: 4.74, fNumber: 1.8,
                             lensPosition: 1.5)

// Reference: bare TurboJPEG, handle and output buffer reused (its best case).
guard let tj = tjInitCompress() else { fatalError("tjInitCompress failed") }
let refCapacity = tjBufSize(Int32(width), Int32(height), Int32(TJSAMP_420.rawValue))
guard let refOut = tjAlloc(Int32(refCapacity)) else { fatalError("tjAlloc failed") }
@MainActor func reference() -> (ms: Double, bytes: Int) {
    var planes: [UnsafePointer<UInt8>?] = [UnsafePointer(yP), UnsafePointer(yP + ySize),
                                           UnsafePointer(yP + ySize + cSize)]
    var strides: [Int32] = [Int32(width), Int32(width / 2), Int32(width / 2)]
    var out: UnsafeMutablePointer<UInt8>? = refOut
    var size = refCapacity
    let t0 = nowNs()
    let r = tjCompressFromYUVPlanes(tj, &planes, Int32(width), &strides, Int32(height), Int32(TJSAMP_420.rawValue),
                                    &out, &size, Int32(quality), TJFLAG_NOREALLOC)
    let t1 = nowNs()
    precondition(r == 0, String(cString: tjGetErrorStr2(tj)))
    return (Double(t1 - t0) / 1e6, Int(size))
}

let encoder = try StillEncoder(quality: quality)
@MainActor func ours(_ f: Frame) throws -> (ms: Double, bytes: Int) {
    let t0 = nowNs()
    let still = try encoder.encode(f, metadata: metadata)
    let t1 = nowNs()
    return (Double(t1 - t0) / 1e6, still.jpeg.count)
}

// Warm up both paths (page faults of the output buffers, caches), then interleave
// so load from other processes hits both sides alike.
_ = reference(); _ = try ours(frame); _ = try ours(nv12)
var refMs: [Double] = [], i420Ms: [Double] = [], nv12Ms: [Double] = []
var refBytes = 0, ourBytes = 0
for _ in 0..<iterations {
    let r = reference(); refMs.append(r.ms); refBytes = r.bytes
    let o = try ours(frame); i420Ms.append(o.ms); ourBytes = o.bytes
    nv12Ms.append(try ours(nv12).ms)
}
tjFree(refOut)
tjDestroy(tj)

func line(_ name: String, _ value: Double, _ reference: Double) -> String {
    func f(_ x: Double) -> String { String(Double((x * 1000).rounded()) / 1000) }
    return "{\"bench\":\"\(name)\",\"value\":\(f(value)),\"unit\":\"ms\",\"reference\":\(f(reference)),"
        + "\"ratio\":\(f(value / reference))}"
}
let ref = median(refMs)
print(line("still_12mp", median(i420Ms), ref))
print(line("still_12mp_nv12", median(nv12Ms), ref))
print("{\"bench\":\"still_12mp_bytes\",\"value\":\(ourBytes),\"unit\":\"bytes\",\"reference\":\(refBytes),"
      + "\"ratio\":\(String(Double((Double(ourBytes) / Double(refBytes) * 1000).rounded()) / 1000))}")

// The time stamp in the picture (docs/overlay.md): per 1080p frame and per 12 MP still.
for l in try OverlayBench.run(still: frame, encoder: encoder, metadata: metadata, iterations: iterations) { print(l) }
