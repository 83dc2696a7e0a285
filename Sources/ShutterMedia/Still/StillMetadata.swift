// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// Everything written into a photo's EXIF besides its pixels. Fields left nil
/// are omitted from the file, never guessed.
public struct StillMetadata: Sendable, Equatable {
    public var make: String
    public var model: String
    public var software: String
    /// When the exposure started. Dates are written only if this is set and trusted.
    public var captureTime: WallTime?
    public var exposureTimeMicroseconds: Int?
    public var analogueGain: Double?
    public var digitalGain: Double?
    public var focalLengthMillimetres: Double?
    public var fNumber: Double?
    /// Dioptres (1 / metres) as libcamera reports it; 0 means focused at infinity.
    public var lensPosition: Double?
    /// Exposure compensation in stops (EXIF ExposureBiasValue).
    public var exposureBias: Double?
    /// Automatic (true) or fixed (false) white balance (EXIF WhiteBalance 0 / 1).
    public var autoWhiteBalance: Bool?
    /// Digital zoom (EXIF DigitalZoomRatio).
    public var digitalZoomRatio: Double?
    /// How exposure was metered (EXIF MeteringMode).
    public var metering: MeteringInEffect?
    /// Degrees the stored image must be turned for display: 0 or 180.
    public var rotation: Int
    /// The stored image is mirrored left-right / top-bottom relative to the scene.
    public var hflip: Bool
    public var vflip: Bool

    public init(make: String = "Raspberry Pi", model: String = "Camera", software: String = "Shutter",
                captureTime: WallTime? = nil, exposureTimeMicroseconds: Int? = nil,
                analogueGain: Double? = nil, digitalGain: Double? = nil,
                focalLengthMillimetres: Double? = nil, fNumber: Double? = nil, lensPosition: Double? = nil,
                rotation: Int = 0, hflip: Bool = false, vflip: Bool = false) {
        self.make = make
        self.model = model
        self.software = software
        self.captureTime = captureTime
        self.exposureTimeMicroseconds = exposureTimeMicroseconds
        self.analogueGain = analogueGain
        self.digitalGain = digitalGain
        self.focalLengthMillimetres = focalLengthMillimetres
        self.fNumber = fNumber
        self.lensPosition = lensPosition
        self.rotation = rotation
        self.hflip = hflip
        self.vflip = vflip
    }

    /// Copies what the camera measured for this frame (exposure, gains, lens).
    public mutating func take(_ frame: FrameMetadata) {
        exposureTimeMicroseconds = frame.exposureTimeMicroseconds ?? exposureTimeMicroseconds
        analogueGain = frame.analogueGain ?? analogueGain
        digitalGain = frame.digitalGain ?? digitalGain
        lensPosition = frame.lensPosition ?? lensPosition
        exposureBias = frame.exposureValue ?? exposureBias
        autoWhiteBalance = frame.autoWhiteBalance ?? autoWhiteBalance
        digitalZoomRatio = frame.digitalZoomRatio ?? digitalZoomRatio
        metering = frame.metering ?? metering
    }

    /// EXIF Orientation (1...4) for a 0/180 rotation combined with flips: a 180°
    /// turn is both flips, so the net mirror on each axis decides the value.
    public func exifOrientation() throws -> UInt16 {
        guard rotation == 0 || rotation == 180 else {
            throw MediaError(.invalidSetting, "rotation \(rotation) is not supported: use 0 or 180")
        }
        let h = hflip != (rotation == 180)
        let v = vflip != (rotation == 180)
        switch (h, v) {
        case (false, false): return 1  // as stored
        case (true, false): return 2   // mirror horizontal
        case (true, true): return 3    // rotate 180
        case (false, true): return 4   // mirror vertical
        }
    }

    /// ISO as EXIF defines it for these sensors: 100 at unity gain.
    public var isoSpeed: Int? {
        guard analogueGain != nil || digitalGain != nil else { return nil }
        let iso = 100 * (analogueGain ?? 1) * (digitalGain ?? 1)
        return Int(min(max(iso.rounded(), 1), 65535))
    }
}
