// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CShutterAV
import ShutterCore
import ShutterStorage

/// A time-lapse film from photos on the card: each photo decoded (libjpeg-turbo), scaled to
/// the film's size (swscale; photos of another size are scaled to the first's), encoded as
/// one frame of H.264 by the clips' encoder and muxed (FFmpeg, through CShutterAV) into a
/// hidden fragmented MP4 beside the film, then made a regular MP4 (one `moov`, as a finished
/// clip) in a second hidden file, synced, and renamed onto the film's name, never replacing
/// a file, and the folder synced. The film is whole under its name or absent: a kill or a
/// power cut at any point leaves at most the hidden files, which the next film's start
/// removes (`removeLeftovers`).
///
/// Blocking and long (seconds per hundred photos on a Pi): run it on a thread of its own.
public enum TimelapseMaker {
    public struct Photo: Sendable, Equatable {
        public var path: String
        /// As the progress and errors name it ("100SHUTR/SHTR0120.JPG").
        public var name: String

        public init(path: String, name: String) {
            self.path = path
            self.name = name
        }
    }

    public struct Summary: Sendable, Equatable {
        public var path: String
        public var frames: Int
        public var size: PixelSize
        public var fps: Int
        public var bytes: Int64
        /// Photos that did not decode, left out of the film (their names, and why).
        public var skipped: [String]
    }

    /// What the maker tells its caller after each photo: `done` of `of` photos handled.
    public typealias Progress = (_ done: Int, _ of: Int) -> Void

    static let partSuffix = ".timelapse-part"
    static let finishingSuffix = ".timelapse-finishing"

    /// The hidden files of a film being made at `path` (`DCIM/.timelapse-….MP4.timelapse-part`).
    public static func temporaryPaths(for path: String) -> (part: String, finishing: String) {
        let dir = PlainIO.deletingLastComponent(path), name = PlainIO.lastComponent(path)
        return (PlainIO.path(dir, "." + name + partSuffix), PlainIO.path(dir, "." + name + finishingSuffix))
    }

    /// Removes the hidden files of films cut off by a kill or a power cut in `dir`; their names.
    @discardableResult
    public static func removeLeftovers(in dir: String) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return [] }
        let gone = names.filter { $0.hasPrefix(".") && ($0.hasSuffix(partSuffix) || $0.hasSuffix(finishingSuffix)) }
        for n in gone { unlink(PlainIO.path(dir, n)) }
        return gone.sorted()
    }

    /// Makes the film `output` from `photos` in their order. `stop` is asked before each
    /// photo (true: give up, `.cancelled`); `progress` is told after each. `sync`: the card's.
    public static func make(_ photos: [Photo], to output: String, settings: TimelapseSettings,
                            sync: CardSync = CardSync(), stop: () -> Bool = { false },
                            progress: Progress = { _, _ in }) throws(TimelapseError) -> Summary {
        try settings.validate()
        guard !photos.isEmpty else { throw TimelapseError(.noPhotos, "no photos to make a time-lapse of") }
        if access(output, F_OK) == 0 {
            throw TimelapseError(.exists, "\(output) exists already: delete it, or name another output")
        }
        let decoder = try JPEGDecoder()
        // The film's size from the first photo that reads.
        var first: PixelSize?
        for p in photos {
            if let bytes = try? read(p), let s = decoder.size(bytes) { first = s; break }
        }
        guard let first else {
            throw TimelapseError(.noPhotos, "none of the \(photos.count) photos is a JPEG that decodes")
        }
        let size = settings.filmSize(first: first)
        let dir = PlainIO.deletingLastComponent(output)
        try checkSpace(dir, need: settings.bytesNeeded(frames: photos.count, size: size) + settings.minFreeBytes,
                       frames: photos.count, size: size)
        let (part, finishing) = temporaryPaths(for: output)
        unlink(part)
        unlink(finishing)
        do throws(TimelapseError) {
            let film = try TimelapseFile(path: part, size: size, settings: settings)
            var skipped: [String] = []
            let scaler = try Scaler()
            var planes = I420(size: size)
            for (i, p) in photos.enumerated() {
                if stop() { throw TimelapseError(.cancelled, "stopped after \(i) of \(photos.count) photos") }
                do throws(TimelapseError) {
                    let picture = try decoder.decode(try read(p), atLeast: size, name: p.name)
                    try scaler.scale(picture, into: &planes)
                    try film.frame(planes)
                } catch where error.code == .decodeFailed {
                    skipped.append(error.message)
                }
                progress(i + 1, photos.count)
            }
            guard film.frames > 0 else {
                throw TimelapseError(.noPhotos, "none of the \(photos.count) photos decodes: \(skipped.prefix(3).joined(separator: "; "))")
            }
            try film.finish()
            let bytes = try regular(part, finishing, output, sync: sync)
            unlink(part)
            return Summary(path: output, frames: film.frames, size: size, fps: settings.fps, bytes: bytes, skipped: skipped)
        } catch {
            unlink(part)
            unlink(finishing)
            throw error
        }
    }

    /// The photo's bytes (a JPEG is at most a few tens of MB; a file larger than 256 MB is no photo of ours).
    private static func read(_ p: Photo) throws(TimelapseError) -> [UInt8] {
        do {
            guard let bytes = try AtomicFile.read(p.path, limit: 256 << 20) else {
                throw TimelapseError(.decodeFailed, "\(p.name) is gone from the card")
            }
            return bytes
        } catch let e as TimelapseError {
            throw e
        } catch {
            throw TimelapseError(.decodeFailed, "\(p.name) does not read: \(error)")
        }
    }

    private static func checkSpace(_ dir: String, need: UInt64, frames: Int, size: PixelSize) throws(TimelapseError) {
        let space: FileSystemSpace
        do { space = try FileSystemSpace.of(dir) } catch {
            throw TimelapseError(.ioError, "cannot see the free space of \(dir): \(error)", errno: error.errno)
        }
        guard space.availableBytes >= need else {
            throw TimelapseError(.noSpace, "not enough space on the card: a \(size) film of \(frames) photos needs "
                                 + "about \(StorageError.megabytes(need)) while it is made, and "
                                 + "\(StorageError.megabytes(space.availableBytes)) is free; copy files off the card, "
                                 + "choose fewer photos or a smaller size")
        }
    }

    /// The fragmented `part` as a regular MP4 at `output`: copied into `finishing`, synced,
    /// renamed onto `output` (never replacing a file), the folder synced. Its size.
    private static func regular(_ part: String, _ finishing: String, _ output: String,
                                sync: CardSync) throws(TimelapseError) -> Int64 {
        var written: Int64 = 0
        var errbuf = [CChar](repeating: 0, count: 256)
        let r = sav_remux_regular(part, finishing, &written, &errbuf, errbuf.count)
        if r < 0 {
            if r == -Int32(SAV_ERR_IO.rawValue) { throw ioError(errno == 0 ? EIO : errno, "write", finishing) }
            let detail = String(decoding: errbuf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw TimelapseError(.encoderFailed, "making the film a regular MP4 failed: \(detail)")
        }
        do throws(SystemError) {
            let fd = try typedEINTR("open", path: finishing) { open(finishing, O_RDONLY | O_CLOEXEC) }
            defer { close(fd) }
            try typedEINTR("fsync", path: finishing) { sync.fsync(fd, path: finishing) }
            try ExclusivePlacement.move(finishing, to: output)
            try AtomicFile.fsyncDirectory(PlainIO.deletingLastComponent(output), sync: sync)
        } catch {
            if error.errno == EEXIST {
                throw TimelapseError(.exists, "\(output) appeared while the film was made; the film was not kept")
            }
            throw ioError(error.errno, error.call, error.path ?? output)
        }
        return written
    }

    static func ioError(_ e: Int32, _ call: String, _ path: String) -> TimelapseError {
        let sys = SystemError(errno: e, call: call, path: path)
        if sys.isNoSpace {
            return TimelapseError(.noSpace, "the card became full while the film was made (\(sys)); nothing was kept: "
                                  + "free space and make it again", errno: e)
        }
        return TimelapseError(.ioError, "\(sys); nothing was kept: check the card", errno: e)
    }
}

/// One I420 picture of the film's size, reused for every frame.
struct I420 {
    let size: PixelSize
    var y: [UInt8], u: [UInt8], v: [UInt8]

    init(size: PixelSize) {
        self.size = size
        y = [UInt8](repeating: 0, count: size.width * size.height)
        u = [UInt8](repeating: 128, count: (size.width / 2) * (size.height / 2))
        v = u
    }
}

/// swscale through CShutterAV: a decoded photo of any size to the film's I420.
final class Scaler {
    private let raw: OpaquePointer

    init() throws(TimelapseError) {
        guard let s = sav_scaler_new() else { throw TimelapseError(.encoderFailed, "no memory for the scaler") }
        raw = s
    }

    deinit { sav_scaler_free(raw) }

    func scale(_ p: JPEGDecoder.Picture, into out: inout I420) throws(TimelapseError) {
        let w = out.size.width, h = out.size.height
        let strides: [Int32] = [Int32(w), Int32(w / 2), Int32(w / 2)]
        let r = p.rgb.withUnsafeBufferPointer { rgb in
            out.y.withUnsafeMutableBufferPointer { y in
                out.u.withUnsafeMutableBufferPointer { u in
                    out.v.withUnsafeMutableBufferPointer { v in
                        let dst: [UnsafeMutablePointer<UInt8>?] = [y.baseAddress, u.baseAddress, v.baseAddress]
                        return dst.withUnsafeBufferPointer { d in
                            strides.withUnsafeBufferPointer { s in
                                sav_scaler_rgb_to_i420(raw, rgb.baseAddress, Int32(p.width * 3), Int32(p.width),
                                                       Int32(p.height), d.baseAddress, s.baseAddress, Int32(w), Int32(h))
                            }
                        }
                    }
                }
            }
        }
        if r < 0 { throw TimelapseError(.encoderFailed, "scaling a \(p.width)x\(p.height) photo to \(out.size) failed") }
    }
}
