// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// The camera's stream sizes are plain pixel sizes (the one type `status` reports).
public typealias CameraSize = PixelSize

/// Everything the real camera needs to be opened and configured. Preferences
/// are best first; what the pipeline granted is reported in `LibcameraCamera.videoStream`
/// / `lastStillStream`.
public struct LibcameraCameraSettings: Sendable, Equatable {
    public var videoSizes: [CameraSize] = [CameraSize(width: 1920, height: 1080)]
    public var framesPerSecond: Double = 30
    /// MJPEG is never asked for: there is no decoder in the pipeline.
    public var videoFormats: [PixelFormat] = [.i420, .nv12, .yuyv, .bgr24, .rgb24]
    /// Empty: the sensor's full pixel array, then the pipeline's StillCapture default.
    public var stillSizes: [CameraSize] = []
    public var stillFormats: [PixelFormat] = [.i420, .nv12, .yuyv, .bgr24, .rgb24]
    /// 0 or 180; anything else is rejected at configure time.
    public var rotation: Int = 0
    public var horizontalFlip = false
    public var verticalFlip = false
    /// `still.moment` `press`: run a still stream beside video (roles VideoRecording
    /// + StillCapture in one configuration), sized by `StillStreamChoice`, so each
    /// video frame carries its still-stream frame. Where the pipeline grants one
    /// stream only (vimc, USB cameras), video alone, reported in `controlReport`.
    public var stillStreamBesideVideo = false
    /// 0 = the pipeline's default buffer count. A still stream beside video gets
    /// the same count (a request holds one buffer of each).
    public var videoBufferCount: Int = 0
    /// Frames buffered for a slow consumer before the oldest is dropped (counted).
    /// Kept below the buffer count so the camera never starves.
    public var streamDepth: Int = 2
    /// The press-to-focus deadline; after it the last good (or hyperfocal) position is used.
    public var autofocusTimeout: Duration = .milliseconds(300)
    /// Frames thrown away after switching to the still configuration, so AE/AWB settle.
    public var stillWarmupFrames: Int = 2
    /// Longest wait for a still frame after the switch; stretched to fit the
    /// warm-up frames and the still at `stillLongestFrame` each (`stillWaitTimeout`).
    public var stillTimeout: Duration = .seconds(3)
    /// The longest frame (so the longest exposure) a still may take in the dark.
    /// Video frames are 1/`framesPerSecond`; a still has its own limits
    /// (`startControls(for: .still)`), clamped to what the sensor mode allows.
    public var stillLongestFrame: Duration = .seconds(1)
    /// Exposure, white balance, focus (continuous by default, where the lens has
    /// autofocus), image tuning, zoom, HDR: set at every start, video and still.
    public var controls = CameraControls()
    /// The sensor's HDR mode, as the opener set it before opening (`SensorHDR`).
    public var sensorHDR = SensorHDRState.off

    public init() {}
}

/// Pixel formats as DRM fourccs (what libcamera's `PixelFormat` carries).
enum CameraFourCC {
    static func code(_ a: Character, _ b: Character, _ c: Character, _ d: Character) -> UInt32 {
        UInt32(a.asciiValue!) | UInt32(b.asciiValue!) << 8 | UInt32(c.asciiValue!) << 16
            | UInt32(d.asciiValue!) << 24
    }

    static func fourcc(for format: PixelFormat) -> UInt32 {
        switch format {
        case .i420: return code("Y", "U", "1", "2")   // libcamera YUV420
        case .nv12: return code("N", "V", "1", "2")
        case .yuyv: return code("Y", "U", "Y", "V")
        case .bgr24: return code("R", "G", "2", "4")  // libcamera RGB888: B, G, R in memory
        case .rgb24: return code("B", "G", "2", "4")  // libcamera BGR888: R, G, B in memory
        }
    }

    static func format(for fourcc: UInt32) -> PixelFormat? {
        PixelFormat.allCases.first { Self.fourcc(for: $0) == fourcc }
    }

    static func name(_ fourcc: UInt32) -> String {
        let bytes = (0..<4).map { UInt8((fourcc >> ($0 * 8)) & 0xff) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
