// SPDX-License-Identifier: BSD-2-Clause
import CLibcameraShim
import ShutterCore

/// What the pipeline granted for one configuration (video or still).
public struct GrantedStream: Sendable, Equatable, CustomStringConvertible {
    public var size: CameraSize
    public var format: PixelFormat
    /// Bytes per line of the first plane.
    public var stride: Int
    public var bufferCount: Int
    /// The first size and format preference were granted unchanged.
    public var exact: Bool
    /// The rotation/flip was accepted unchanged.
    public var transformGranted: Bool
    /// libcamera's own text, e.g. "1920x1080-YUV420".
    public var libcameraDescription: String
    /// Bytes of one frame (libcamera's frameSize), 0 when unknown.
    public var frameSize: Int = 0

    public var description: String {
        "\(libcameraDescription) stride \(stride), \(bufferCount) buffers"
            + (exact ? "" : " (adjusted)") + (transformGranted ? "" : " (transform not granted)")
    }
}

/// Turns the shim's POD frame into ShutterCore's `Frame`, pointing at the
/// buffers mapped once at start; the frame's release returns its request.
enum CameraFrameAssembly {
    /// `still`: the still stream configured beside video; its buffer of the same
    /// request becomes the frame's `companion` (same timestamp and metadata: one
    /// sensor frame). Both frames hold the request until the last is dropped.
    static func frame(from f: shc_frame, stream: GrantedStream, still: GrantedStream? = nil,
                      whiteBalance: CameraControls.WhiteBalance, metering: MeteringInEffect?,
                      token: ShimFrameToken) -> Frame {
        let claim = ShimFrameClaim(token)
        let timestamp = MonotonicTime(nanoseconds: f.timestamp_ns)
        let metadata = metadata(from: f, whiteBalance: whiteBalance, metering: metering)
        var companion: Frame?
        if let still, f.still_plane_count > 0 {
            let (bases, lengths) = planePointers(f.still_plane_data, f.still_plane_length, count: f.still_plane_count)
            companion = Frame(width: still.size.width, height: still.size.height, format: still.format,
                              planes: planes(bases: bases, lengths: lengths, stream: still), timestamp: timestamp,
                              sequence: f.sequence, metadata: metadata,
                              onRelease: { withExtendedLifetime(claim) {} })
        }
        let (bases, lengths) = planePointers(f.plane_data, f.plane_length, count: f.plane_count)
        return Frame(width: stream.size.width, height: stream.size.height, format: stream.format,
                     planes: planes(bases: bases, lengths: lengths, stream: stream), timestamp: timestamp,
                     sequence: f.sequence, metadata: metadata, companion: companion,
                     onRelease: { withExtendedLifetime(claim) {} })
    }

    /// The shim's fixed arrays (imported as tuples) as pointers and lengths.
    static func planePointers<P, L>(_ data: P, _ length: L, count: UInt32) -> ([UnsafePointer<UInt8>], [Int]) {
        let count = min(Int(count), Int(SHC_MAX_PLANES))
        var bases: [UnsafePointer<UInt8>] = []
        var lengths: [Int] = []
        withUnsafeBytes(of: data) { raw in
            for i in 0..<count {
                let p = raw.load(fromByteOffset: i * MemoryLayout<UnsafePointer<UInt8>?>.stride,
                                 as: UnsafePointer<UInt8>?.self)
                if let p { bases.append(p) }
            }
        }
        withUnsafeBytes(of: length) { raw in
            for i in 0..<bases.count {
                lengths.append(Int(raw.load(fromByteOffset: i * 4, as: UInt32.self)))
            }
        }
        return (bases, lengths)
    }

    /// Plane layout by format; a single contiguous plane is split by stride
    /// (some pipelines give one plane for 4:2:0).
    static func planes(bases: [UnsafePointer<UInt8>], lengths: [Int], stream: GrantedStream) -> [FramePlane] {
        let h = stream.size.height
        let stride = stream.stride
        switch stream.format {
        case .i420:
            let cStride = stride / 2, cRows = (h + 1) / 2
            if bases.count >= 3 {
                return [FramePlane(base: UnsafeRawPointer(bases[0]), stride: stride, length: lengths[0]),
                        FramePlane(base: UnsafeRawPointer(bases[1]), stride: cStride, length: lengths[1]),
                        FramePlane(base: UnsafeRawPointer(bases[2]), stride: cStride, length: lengths[2])]
            }
            guard let base = bases.first.map(UnsafeRawPointer.init) else { return [] }
            let y = stride * h, c = cStride * cRows
            return [FramePlane(base: base, stride: stride, length: y),
                    FramePlane(base: base + y, stride: cStride, length: c),
                    FramePlane(base: base + y + c, stride: cStride, length: c)]
        case .nv12:
            if bases.count >= 2 {
                return [FramePlane(base: UnsafeRawPointer(bases[0]), stride: stride, length: lengths[0]),
                        FramePlane(base: UnsafeRawPointer(bases[1]), stride: stride, length: lengths[1])]
            }
            guard let base = bases.first.map(UnsafeRawPointer.init) else { return [] }
            let y = stride * h
            return [FramePlane(base: base, stride: stride, length: y),
                    FramePlane(base: base + y, stride: stride, length: stride * ((h + 1) / 2))]
        case .yuyv, .rgb24, .bgr24:
            return zip(bases, lengths).map { FramePlane(base: UnsafeRawPointer($0.0), stride: stride, length: $0.1) }
        }
    }

    /// What the frame's libcamera metadata reported; nil for what it did not.
    /// AwbEnable says only whether the AWB loop runs: with a preset (`daylight`)
    /// it runs within that preset's range, which EXIF calls manual white balance,
    /// so the asked mode decides between the two.
    /// `metering`: what the camera was given (libcamera reports no metering in
    /// a frame's metadata), nil when it has no AeMeteringMode.
    static func metadata(from f: shc_frame, whiteBalance: CameraControls.WhiteBalance,
                         metering: MeteringInEffect? = nil) -> FrameMetadata {
        var m = FrameMetadata(
            exposureTimeMicroseconds: f.has_exposure_time != 0 ? Int(f.exposure_time_us) : nil,
            analogueGain: f.has_analogue_gain != 0 ? Double(f.analogue_gain) : nil,
            digitalGain: f.has_digital_gain != 0 ? Double(f.digital_gain) : nil,
            lux: f.has_lux != 0 ? Double(f.lux) : nil,
            colourTemperature: f.has_colour_temperature != 0 ? Int(f.colour_temperature) : nil,
            autofocusState: f.has_af_state != 0 ? autofocusState(f.af_state) : nil,
            lensPosition: f.has_lens_position != 0 ? Double(f.lens_position) : nil,
            colourGains: f.has_colour_gains != 0 ? [Double(f.colour_gains.0), Double(f.colour_gains.1)] : nil)
        m.exposureValue = f.has_exposure_value != 0 ? Double(f.exposure_value) : nil
        m.autoWhiteBalance = f.has_awb_enable != 0 ? f.awb_enable != 0 && whiteBalance.mode == .auto : nil
        m.digitalZoomRatio = f.has_scaler_crop != 0
            ? zoomRatio(cropWidth: f.scaler_crop.2, maximumWidth: f.scaler_crop_maximum.2) : nil
        m.metering = metering
        return m
    }

    /// The full crop area's width over the crop's (EXIF DigitalZoomRatio); nil
    /// when either is unknown, never below 1 (a crop reported a pixel wider
    /// than its maximum is no zoom).
    static func zoomRatio(cropWidth: Int32, maximumWidth: Int32) -> Double? {
        guard cropWidth > 0, maximumWidth > 0 else { return nil }
        return max(1, Double(maximumWidth) / Double(cropWidth))
    }

    /// libcamera's AfStateEnum.
    static func autofocusState(_ v: Int32) -> AutofocusState {
        switch v {
        case 1: return .scanning
        case 2: return .focused
        case 3: return .failed
        default: return .idle
        }
    }
}
