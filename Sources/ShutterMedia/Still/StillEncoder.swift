// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import CTurboJPEG
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore
import Synchronization

/// Encodes camera frames to JPEG with EXIF, straight from the frame's planes:
/// I420 (with strides) goes to TurboJPEG as YUV planes (no RGB round trip),
/// NV12 through libjpeg's raw-data API in strips (no copy of the frame), packed
/// RGB/BGR is compressed directly, YUYV is converted once to planar 4:2:2.
/// One TurboJPEG handle and its buffers are reused for every photo. Call it on a
/// dedicated thread/queue, never the task pool: 12 MP is ~35 ms on x86, several
/// times that on a Pi.
public final class StillEncoder: Sendable {
    /// The handle and its buffers: encode holds them (under the lock) throughout.
    private struct Workspace: ~Copyable {
        let handle: tjhandle
        /// JPEG output, sized with tjBufSize so TurboJPEG never reallocates it.
        var output = ReusableBuffer()
        var thumbnailOutput = ReusableBuffer()
        /// NV12 strip scratch (8 chroma rows) or planar YUYV: reused.
        var converted = ReusableBuffer()
        var thumbnailPixels = ReusableBuffer()
        /// The time stamp's rows, copied and blended (`compressStamped`): reused.
        var band = ReusableBuffer()

        init(handle: tjhandle) { self.handle = handle }
        deinit { tjDestroy(handle) }
    }
    private let workspace: Mutex<Workspace>

    public let quality: Int
    public let thumbnailQuality: Int
    public let thumbnailMaxSide: Int

    public init(quality: Int = 93, thumbnailQuality: Int = 80, thumbnailMaxSide: Int = 160) throws {
        guard (1...100).contains(quality), (1...100).contains(thumbnailQuality) else {
            throw MediaError(.invalidSetting, "JPEG quality must be 1...100 (got \(quality), "
                             + "thumbnail \(thumbnailQuality)); 93 is the default")
        }
        guard thumbnailMaxSide >= 16 && thumbnailMaxSide <= 320 else {
            throw MediaError(.invalidSetting, "thumbnail size must be 16...320 pixels (got \(thumbnailMaxSide))")
        }
        guard let h = tjInitCompress() else {
            throw MediaError(.encoderFailed, "libjpeg-turbo could not start: \(String(cString: tjGetErrorStr2(nil)))")
        }
        workspace = Mutex(Workspace(handle: h))
        self.quality = quality
        self.thumbnailQuality = thumbnailQuality
        self.thumbnailMaxSide = thumbnailMaxSide
    }

    /// The frame as a finished JPEG with EXIF and thumbnail, in memory. `stamp`: the time
    /// stamp blended into a copy of its rows only (a YUV 4:2:0 frame; docs/overlay.md).
    public func encode(_ frame: Frame, metadata: StillMetadata, stamp: OverlayStamp.Placed? = nil) throws -> EncodedStill {
        try workspace.withLock { ws -> EncodedStill in
            try Self.validate(frame)
            let orientation = try metadata.exifOrientation()

            let mainSize: Int
            if let stamp, stamp.fits(width: frame.width, height: frame.height) {
                if frame.format == .i420 || frame.format == .nv12 {
                    mainSize = try Self.compressStamped(frame, stamp, quality: quality, in: &ws)
                } else {
                    mainSize = try Self.compress(Self.stampedCopy(frame, stamp, in: &ws), quality: quality, in: &ws)
                }
            } else {
                mainSize = try Self.compress(frame, quality: quality, in: &ws)
            }
            let (tw, th) = StillThumbnail.size(width: frame.width, height: frame.height, maxSide: thumbnailMaxSide)
            let tPixels = ws.thumbnailPixels.reserve(StillThumbnail.byteCount(width: tw, height: th))
            StillThumbnail.sample(frame, into: tPixels, width: tw, height: th)
            let handle = ws.handle
            let thumbSize = try Self.compressYUV(
                handle,
                planes: [UnsafePointer(tPixels), UnsafePointer(tPixels + tw * th),
                         UnsafePointer(tPixels + tw * th + (tw / 2) * (th / 2))],
                strides: [tw, tw / 2, tw / 2], width: tw, height: th, subsampling: TJSAMP_420,
                quality: thumbnailQuality, into: &ws.thumbnailOutput)
            let exif = try StillExif.payload(metadata, width: frame.width, height: frame.height,
                                             orientation: orientation,
                                             thumbnail: UnsafeRawBufferPointer(start: ws.thumbnailOutput.pointer,
                                                                               count: thumbSize))
            return Self.assemble(exif: exif, jpeg: UnsafeBufferPointer(start: ws.output.pointer, count: mainSize),
                                 width: frame.width, height: frame.height, thumbnailByteCount: thumbSize)
        }
    }

    // MARK: - Compression per pixel format

    private static func compress(_ frame: Frame, quality: Int, in ws: inout Workspace) throws -> Int {
        let w = frame.width, h = frame.height, cw = (w + 1) / 2
        let p = frame.planes
        let handle = ws.handle
        func bytes(_ i: Int) -> UnsafePointer<UInt8> { p[i].base.assumingMemoryBound(to: UInt8.self) }
        switch frame.format {
        case .i420:
            return try compressYUV(handle, planes: [bytes(0), bytes(1), bytes(2)],
                                   strides: [p[0].stride, p[1].stride, p[2].stride],
                                   width: w, height: h, subsampling: TJSAMP_420, quality: quality, into: &ws.output)
        case .nv12:
            // TurboJPEG wants separate Cb/Cr planes; libjpeg's raw-data API in 16-row
            // strips reads luma in place and splits only 8 chroma rows at a time.
            let scratch = ws.converted.reserve(Int(shutter_jpeg_nv12_scratch_size(Int32(w))))
            let dst = ws.output.reserve(Int(tjBufSize(Int32(w), Int32(h), Int32(TJSAMP_420.rawValue))))
            var size: UInt = 0
            var message = [CChar](repeating: 0, count: 200)
            let r = shutter_jpeg_compress_nv12(bytes(0), Int32(p[0].stride), bytes(1), Int32(p[1].stride),
                                               Int32(w), Int32(h), Int32(quality), scratch, dst,
                                               UInt(ws.output.capacity), &size, &message, message.count)
            guard r == 0 else {
                throw MediaError(.encoderFailed, "libjpeg failed to encode the NV12 frame: "
                                 + "\(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)); "
                                 + "the photo was not taken")
            }
            return Int(size)
        case .yuyv:
            // Packed 4:2:2 -> planar 4:2:2, once; the JPEG keeps the 4:2:2 chroma.
            let y = ws.converted.reserve(w * h + 2 * cw * h), u = y + w * h, v = u + cw * h
            let src = bytes(0)
            for row in 0..<h {
                let s = src + row * p[0].stride, yr = y + row * w, ur = u + row * cw, vr = v + row * cw
                for x in 0..<w { yr[x] = s[2 * x] }
                for x in 0..<(w / 2) {
                    ur[x] = s[4 * x + 1]
                    vr[x] = s[4 * x + 3]
                }
            }
            return try compressYUV(handle, planes: [UnsafePointer(y), UnsafePointer(u), UnsafePointer(v)],
                                   strides: [w, cw, cw],
                                   width: w, height: h, subsampling: TJSAMP_422, quality: quality, into: &ws.output)
        case .rgb24, .bgr24:
            let pf = frame.format == .rgb24 ? TJPF_RGB : TJPF_BGR
            let dst = ws.output.reserve(Int(tjBufSize(Int32(w), Int32(h), Int32(TJSAMP_420.rawValue))))
            var outPtr: UnsafeMutablePointer<UInt8>? = dst
            var size = UInt(ws.output.capacity)
            let r = tjCompress2(handle, bytes(0), Int32(w), Int32(p[0].stride), Int32(h), Int32(pf.rawValue),
                                &outPtr, &size, Int32(TJSAMP_420.rawValue), Int32(quality), TJFLAG_NOREALLOC)
            try check(r, "RGB", handle)
            return Int(size)
        }
    }

    /// A 4:2:0 frame with the stamp: libjpeg's raw-data API over row pointers, the stamp's
    /// rows from a small blended copy and every other row read in place (the camera's
    /// buffer is never written: it is mapped read-only and the clip encoder may read it now).
    private static func compressStamped(_ frame: Frame, _ p: OverlayStamp.Placed, quality: Int,
                                        in ws: inout Workspace) throws -> Int {
        let w = frame.width, h = frame.height, ch = (h + 1) / 2
        let nv12 = frame.format == .nv12
        let planes = frame.planes
        func src(_ i: Int) -> UnsafePointer<UInt8> { planes[i].base.assumingMemoryBound(to: UInt8.self) }
        let rows = p.stamp.height, cRows = rows / 2, y0 = p.y, c0 = p.y / 2
        let yBytes = w, cBytes = nv12 ? 2 * ((w + 1) / 2) : (w + 1) / 2
        let band = ws.band.reserve(rows * yBytes + cRows * cBytes * (nv12 ? 1 : 2))
        let bandY = band, bandU = band + rows * yBytes, bandV = bandU + cRows * cBytes
        for r in 0..<rows { (bandY + r * yBytes).update(from: src(0) + (y0 + r) * planes[0].stride, count: yBytes) }
        for r in 0..<cRows {
            (bandU + r * cBytes).update(from: src(1) + (c0 + r) * planes[1].stride, count: cBytes)
            if !nv12 { (bandV + r * cBytes).update(from: src(2) + (c0 + r) * planes[2].stride, count: cBytes) }
        }
        OverlayStamp.blend(p, y: bandY, yStride: yBytes, u: bandU, v: nv12 ? nil : bandV, cStride: cBytes,
                           interleaved: nv12)
        var yRows = [UnsafePointer<UInt8>?](repeating: nil, count: h)
        for r in 0..<h {
            yRows[r] = r >= y0 && r < y0 + rows ? UnsafePointer(bandY + (r - y0) * yBytes) : src(0) + r * planes[0].stride
        }
        var uRows = [UnsafePointer<UInt8>?](repeating: nil, count: ch)
        var vRows = [UnsafePointer<UInt8>?](repeating: nil, count: nv12 ? 1 : ch)
        for r in 0..<ch {
            let inBand = r >= c0 && r < c0 + cRows
            uRows[r] = inBand ? UnsafePointer(bandU + (r - c0) * cBytes) : src(1) + r * planes[1].stride
            if !nv12 { vRows[r] = inBand ? UnsafePointer(bandV + (r - c0) * cBytes) : src(2) + r * planes[2].stride }
        }
        let scratch = ws.converted.reserve(Int(shutter_jpeg_nv12_scratch_size(Int32(w))))
        let dst = ws.output.reserve(Int(tjBufSize(Int32(w), Int32(h), Int32(TJSAMP_420.rawValue))))
        var size: UInt = 0
        var message = [CChar](repeating: 0, count: 200)
        let r = shutter_jpeg_compress_rows420(&yRows, &uRows, &vRows, nv12 ? 1 : 0, Int32(w), Int32(h), Int32(quality),
                                              scratch, dst, UInt(ws.output.capacity), &size, &message, message.count)
        guard r == 0 else {
            throw MediaError(.encoderFailed, "libjpeg failed to encode the stamped frame: "
                             + "\(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)); "
                             + "the photo was not taken")
        }
        return Int(size)
    }

    /// A packed frame (RGB, BGR, YUYV: vimc, a USB webcam) with the stamp: a whole copy,
    /// blended (TurboJPEG takes such a frame as one buffer, so its rows cannot be swapped).
    private static func stampedCopy(_ frame: Frame, _ p: OverlayStamp.Placed, in ws: inout Workspace) -> Frame {
        let plane = frame.planes[0]
        let copy = ws.band.reserve(plane.length)
        UnsafeMutableRawPointer(copy).copyMemory(from: plane.base, byteCount: plane.length)
        OverlayStamp.draw(p, format: frame.format, planes: [UnsafeMutableRawPointer(copy)], strides: [plane.stride])
        return Frame(width: frame.width, height: frame.height, format: frame.format,
                     planes: [FramePlane(base: UnsafeRawPointer(copy), stride: plane.stride, length: plane.length)],
                     timestamp: frame.timestamp, sequence: frame.sequence)
    }

    private static func compressYUV(_ handle: tjhandle, planes: [UnsafePointer<UInt8>], strides: [Int], width: Int,
                                    height: Int, subsampling: TJSAMP, quality: Int,
                                    into out: inout ReusableBuffer) throws -> Int {
        let dst = out.reserve(Int(tjBufSize(Int32(width), Int32(height), Int32(subsampling.rawValue))))
        var outPtr: UnsafeMutablePointer<UInt8>? = dst
        var size = UInt(out.capacity)
        var src: [UnsafePointer<UInt8>?] = planes
        var st: [Int32] = strides.map { Int32($0) }
        let r = src.withUnsafeMutableBufferPointer { sp in
            st.withUnsafeMutableBufferPointer { stp in
                tjCompressFromYUVPlanes(handle, sp.baseAddress, Int32(width), stp.baseAddress, Int32(height),
                                        Int32(subsampling.rawValue), &outPtr, &size, Int32(quality),
                                        TJFLAG_NOREALLOC)
            }
        }
        try check(r, "YUV", handle)
        return Int(size)
    }

    private static func check(_ r: Int32, _ what: String, _ handle: tjhandle) throws {
        guard r == 0 else {
            throw MediaError(.encoderFailed, "libjpeg-turbo failed to encode the \(what) frame: "
                             + "\(String(cString: tjGetErrorStr2(handle))); the photo was not taken")
        }
    }

    // MARK: - Frame checks and assembly

    /// Rejects frames whose planes cannot hold the pixels their strides claim,
    /// before any C code reads them.
    static func validate(_ f: Frame) throws {
        let w = f.width, h = f.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        guard w >= 2, h >= 2, w <= 65500, h <= 65500 else {
            throw MediaError(.invalidFrame, "frame is \(w)x\(h): JPEG needs 2...65500 pixels each way")
        }
        // TurboJPEG's YUV planes are padded to the chroma subsampling: an odd 4:2:0
        // frame would be read one row and column past its end. Cameras give even sizes.
        if f.format == .i420 || f.format == .nv12 || f.format == .yuyv,
           w % 2 != 0 || (h % 2 != 0 && f.format != .yuyv) {
            throw MediaError(.invalidFrame, "\(f.format.rawValue) frame is \(w)x\(h): chroma subsampling needs "
                             + "an even width\(f.format == .yuyv ? "" : " and height"); configure an even size")
        }
        let need: [(rowBytes: Int, rows: Int)]
        switch f.format {
        case .i420: need = [(w, h), (cw, ch), (cw, ch)]
        case .nv12: need = [(w, h), (2 * cw, ch)]
        case .yuyv: need = [(2 * w, h)]
        case .rgb24, .bgr24: need = [(3 * w, h)]
        }
        guard f.planes.count >= need.count else {
            throw MediaError(.invalidFrame, "\(f.format.rawValue) frame has \(f.planes.count) planes, "
                             + "needs \(need.count): the camera configuration and the frame disagree")
        }
        for (i, n) in need.enumerated() {
            let p = f.planes[i]
            guard p.stride >= n.rowBytes, p.length >= p.stride * (n.rows - 1) + n.rowBytes else {
                throw MediaError(.invalidFrame, "\(f.format.rawValue) \(w)x\(h) plane \(i) has stride "
                                 + "\(p.stride) and \(p.length) bytes, needs \(n.rowBytes)-byte rows x \(n.rows)")
            }
        }
    }

    /// SOI + APP1(EXIF) + the JPEG after its SOI, dropping TurboJPEG's JFIF APP0:
    /// EXIF wants APP1 first, and the two headers disagree on who describes the file.
    static func assemble(exif: [UInt8], jpeg: UnsafeBufferPointer<UInt8>, width: Int, height: Int,
                         thumbnailByteCount: Int) -> EncodedStill {
        var body = 2
        if jpeg.count > 6, jpeg[2] == 0xFF, jpeg[3] == 0xE0 {
            body = 4 + (Int(jpeg[4]) << 8 | Int(jpeg[5]))
        }
        let segment = 4 + exif.count
        let total = 2 + segment + (jpeg.count - body)
        let bytes = [UInt8](unsafeUninitializedCapacity: total) { out, count in
            out[0] = 0xFF; out[1] = 0xD8
            out[2] = 0xFF; out[3] = 0xE1
            out[4] = UInt8((exif.count + 2) >> 8); out[5] = UInt8((exif.count + 2) & 0xFF)
            exif.withUnsafeBufferPointer { e in
                (out.baseAddress! + 6).update(from: e.baseAddress!, count: e.count)
            }
            (out.baseAddress! + 2 + segment).update(from: jpeg.baseAddress! + body, count: jpeg.count - body)
            count = total
        }
        return EncodedStill(jpeg: bytes, width: width, height: height, exifByteCount: segment,
                            thumbnailByteCount: thumbnailByteCount)
    }
}

/// Heap memory that grows to the largest size asked for and is then reused.
struct ReusableBuffer: ~Copyable {
    private(set) var pointer: UnsafeMutablePointer<UInt8>?
    private(set) var capacity = 0

    init() {}

    mutating func reserve(_ n: Int) -> UnsafeMutablePointer<UInt8> {
        if let pointer, capacity >= n { return pointer }
        pointer?.deallocate()
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: max(n, 1))
        pointer = p
        capacity = max(n, 1)
        return p
    }

    deinit { pointer?.deallocate() }
}
