// SPDX-License-Identifier: BSD-2-Clause
/// Pixel layouts a camera may deliver. The Pi's ISP gives YUV 4:2:0; vimc gives
/// RGB; a USB webcam gives YUYV or MJPEG. Media converts once where needed.
public enum PixelFormat: String, Sendable, Codable, CaseIterable {
    case i420      // Y plane, U plane, V plane (4:2:0)
    case nv12      // Y plane, interleaved UV plane (4:2:0)
    case yuyv      // packed 4:2:2
    case rgb24     // packed, bytes R, G, B in memory (libcamera/DRM "BGR888")
    case bgr24     // packed, bytes B, G, R in memory (libcamera/DRM "RGB888")
}

/// One plane of a frame buffer: memory mapped once by the camera, read-only here.
// Unchecked: a read-only pointer into the camera's mapped buffer, valid for the owning Frame's lifetime.
public struct FramePlane: @unchecked Sendable {
    public let base: UnsafeRawPointer
    public let stride: Int
    public let length: Int

    public init(base: UnsafeRawPointer, stride: Int, length: Int) {
        self.base = base
        self.stride = stride
        self.length = length
    }
}

public enum AutofocusState: String, Sendable, Codable {
    case idle, scanning, focused, failed
}

/// What the camera reports with each frame: for EXIF, auto-flash and the watchdog.
public struct FrameMetadata: Sendable, Equatable, Codable {
    public var exposureTimeMicroseconds: Int?
    public var analogueGain: Double?
    public var digitalGain: Double?
    public var lux: Double?
    public var colourTemperature: Int?
    public var autofocusState: AutofocusState?
    /// Lens position in dioptres (1 / metres), libcamera's LensPosition.
    public var lensPosition: Double?
    /// White-balance gains in effect, [red, blue] (libcamera's ColourGains).
    public var colourGains: [Double]?
    /// The exposure compensation in effect, in stops (libcamera's ExposureValue); 0 when exposure is manual.
    public var exposureValue: Double?
    /// White balance is automatic (`auto`, no fixed gains), rather than a preset or fixed gains.
    public var autoWhiteBalance: Bool?
    /// The digital zoom in effect: the full width over the crop's width (1: none).
    public var digitalZoomRatio: Double?
    /// How exposure was metered for this frame: the metering mode the camera
    /// was given, or the exposure window where the camera honours one; nil
    /// when the camera has no metering control.
    public var metering: MeteringInEffect?

    public init(exposureTimeMicroseconds: Int? = nil, analogueGain: Double? = nil,
                digitalGain: Double? = nil, lux: Double? = nil, colourTemperature: Int? = nil,
                autofocusState: AutofocusState? = nil, lensPosition: Double? = nil,
                colourGains: [Double]? = nil) {
        self.exposureTimeMicroseconds = exposureTimeMicroseconds
        self.analogueGain = analogueGain
        self.digitalGain = digitalGain
        self.lux = lux
        self.colourTemperature = colourTemperature
        self.autofocusState = autofocusState
        self.lensPosition = lensPosition
        self.colourGains = colourGains
    }
}

/// A completed camera frame. Its buffer goes back to the camera (the request is
/// requeued) when the last reference is dropped: the rpicam-apps
/// `CompletedRequestPtr` deleter model. Immutable, so it may cross threads.
public final class Frame: Sendable {
    // `onRelease` is called once, in deinit.
    public let width: Int
    public let height: Int
    public let format: PixelFormat
    public let planes: [FramePlane]
    /// The sensor timestamp on CLOCK_MONOTONIC: on the Pi the frame-start
    /// interrupt, about one exposure time after the first row began exposing
    /// (libcamera's SensorTimestamp; docs/control-and-api.md, The moment of the press). The
    /// simulated camera stamps its frames the same way.
    public let timestamp: MonotonicTime
    public let sequence: UInt64
    public let metadata: FrameMetadata
    /// The still-stream frame of the same sensor frame, where the camera grants
    /// a second, larger stream alongside video (libcamera completes both in one
    /// request): what a press-moment photo is made of. Nil on one stream.
    public let companion: Frame?
    private let onRelease: (@Sendable () -> Void)?

    public init(width: Int, height: Int, format: PixelFormat, planes: [FramePlane],
                timestamp: MonotonicTime, sequence: UInt64, metadata: FrameMetadata = FrameMetadata(),
                companion: Frame? = nil, onRelease: (@Sendable () -> Void)? = nil) {
        self.width = width
        self.height = height
        self.format = format
        self.planes = planes
        self.timestamp = timestamp
        self.sequence = sequence
        self.metadata = metadata
        self.companion = companion
        self.onRelease = onRelease
    }

    /// When the first row began exposing: the timestamp minus the exposure time
    /// where the metadata has one, else the timestamp (vimc reports no exposure).
    public var exposureStart: MonotonicTime {
        guard let us = metadata.exposureTimeMicroseconds, us > 0 else { return timestamp }
        return timestamp - .microseconds(us)
    }

    deinit { onRelease?() }
}

/// A frame whose pixels live in Swift-owned memory (simulated camera, tests,
/// converted frames). Allocated once and reused by pools, not per frame.
// Unchecked: owns raw memory, written only by the producer before the Frame that wraps it is published.
public final class OwnedFrameBuffer: @unchecked Sendable {
    public let bytes: UnsafeMutableRawPointer
    public let capacity: Int

    public init(capacity: Int) {
        self.capacity = capacity
        bytes = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 64)
    }

    deinit { bytes.deallocate() }
}

extension Frame {
    /// An I420 frame over `buffer` (Y, then U, then V, tightly packed).
    public static func i420(width: Int, height: Int, buffer: OwnedFrameBuffer, timestamp: MonotonicTime,
                            sequence: UInt64, metadata: FrameMetadata = FrameMetadata(), companion: Frame? = nil,
                            onRelease: (@Sendable () -> Void)? = nil) -> Frame {
        let ySize = width * height
        let cw = (width + 1) / 2, ch = (height + 1) / 2
        precondition(buffer.capacity >= ySize + 2 * cw * ch, "buffer too small for I420 \(width)x\(height)")
        let base = UnsafeRawPointer(buffer.bytes)
        let planes = [
            FramePlane(base: base, stride: width, length: ySize),
            FramePlane(base: base + ySize, stride: cw, length: cw * ch),
            FramePlane(base: base + ySize + cw * ch, stride: cw, length: cw * ch),
        ]
        return Frame(width: width, height: height, format: .i420, planes: planes, timestamp: timestamp,
                     sequence: sequence, metadata: metadata, companion: companion,
                     onRelease: { withExtendedLifetime(buffer) {}; onRelease?() })
    }

    public static func i420ByteCount(width: Int, height: Int) -> Int {
        width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
    }
}
