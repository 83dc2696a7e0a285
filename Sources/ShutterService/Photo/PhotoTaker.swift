// SPDX-License-Identifier: BSD-2-Clause
import Dispatch
import ShutterBuild
import ShutterCore
import ShutterStorage
import ShutterMedia

/// A photo on the card: where, which frame, and when it became durable.
struct SavedPhoto: Sendable {
    var path: String
    /// When the photo's exposure began.
    var exposureStart: MonotonicTime
    var size: PixelSize
    /// When the file was durable (renamed, directory synced).
    var durableAt: MonotonicTime
}

/// A JPEG in memory, encoded from a frame that may yet become a photo (the
/// `press` moment encodes at the press, before the tap is known).
struct EncodedPhoto: Sendable {
    var jpeg: [UInt8]
    var exposureStart: MonotonicTime
    var size: PixelSize
}

/// A photo's slow work: encode a frame with EXIF to a JPEG in memory, and save it
/// durably (temp, fsync, rename, directory fsync). The `press` moment splits it:
/// `encode` at the press, `write` at the tap. Everything here runs off the
/// service loop, in jobs; JPEG encoding and the file system run on one serial queue.
final class PhotoTaker: Sendable {
    private let config: ShutterConfig
    private let storage: Storage
    private let encoder: Result<StillEncoder, CaptureError>
    private let clock: any MonotonicClock
    private let wallClock: any WallClock
    private let cameraAppliesTransform: Bool
    /// The time stamp (docs/overlay.md); nil when off.
    private let overlay: TextOverlay?

    init(config: ShutterConfig, storage: Storage, clock: any MonotonicClock, wallClock: any WallClock,
         cameraAppliesTransform: Bool, overlay: TextOverlay? = nil) {
        self.overlay = overlay
        self.config = config
        self.storage = storage
        self.clock = clock
        self.wallClock = wallClock
        self.cameraAppliesTransform = cameraAppliesTransform
        do {
            encoder = .success(try StillEncoder(quality: config.still.quality))
        } catch {
            encoder = .failure(CaptureError(.encoder, "the JPEG encoder could not start (\(error)); photos cannot be saved"))
        }
    }

    /// Why photos cannot be saved at all, if so (logged once at start).
    var unavailableReason: String? {
        if case .failure(let e) = encoder { return e.message }
        return nil
    }

    /// The serial queue a photo's jobs run on (`Jobs.run(on:)`): encodes and writes in order.
    let queue = DispatchQueue(label: "shutter.photo")

    /// Encodes and saves a frame already in hand (a still, or a video frame for a
    /// photo asked for during a recording). On `queue`.
    func save(_ frame: Frame, camera: CameraInfo?) -> Result<SavedPhoto, CaptureError> {
        encode(frame, camera: camera).flatMap(write)
    }

    /// The JPEG of `frame`, in memory. Holds the frame (a camera buffer) only until encoded. On `queue`.
    func encode(_ frame: Frame, camera: CameraInfo?) -> Result<EncodedPhoto, CaptureError> {
        let encoder: StillEncoder
        switch self.encoder {
        case .success(let e): encoder = e
        case .failure(let e): return .failure(e)
        }
        do {
            // The stamp of the exposure's second, ready ahead (TextOverlay): only a blend here.
            let stamp = overlay?.placed(at: frame.exposureStart, width: frame.width, height: frame.height)
            let still = try encoder.encode(frame, metadata: metadata(for: frame, camera: camera), stamp: stamp)
            return .success(EncodedPhoto(jpeg: still.jpeg, exposureStart: frame.exposureStart,
                                         size: PixelSize(width: frame.width, height: frame.height)))
        } catch {
            return .failure(CaptureError(.encoder, "could not encode the photo: \(error)"))
        }
    }

    /// Writes an encoded photo durably (temp, fsync, rename, directory fsync). On `queue`.
    func write(_ photo: EncodedPhoto) -> Result<SavedPhoto, CaptureError> {
        do throws(StorageError) {
            _ = try storage.ensureSpace(for: .photo)
            let path = try storage.savePhoto(bytes: photo.jpeg).path
            return .success(SavedPhoto(path: path, exposureStart: photo.exposureStart, size: photo.size,
                                       durableAt: clock.now()))
        } catch {
            return .failure(CaptureError(error))
        }
    }

    private func metadata(for frame: Frame, camera: CameraInfo?) -> StillMetadata {
        let o = CameraLabels.orientation(config, cameraAppliesTransform: cameraAppliesTransform)
        var meta = StillMetadata(
            make: CameraLabels.make(config, camera), model: CameraLabels.model(config, camera),
            software: ShutterVersion.software,
            // The moment the exposure began, not the save: EXIF DateTimeOriginal and SubSecTimeOriginal.
            captureTime: wallClock.now().adding(frame.exposureStart - clock.now()),
            focalLengthMillimetres: config.exif.focalLengthMm, fNumber: config.exif.fNumber,
            rotation: o.rotation, hflip: o.hflip, vflip: o.vflip)
        meta.take(frame.metadata)
        return meta
    }
}
