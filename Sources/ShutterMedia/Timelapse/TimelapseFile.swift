// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import CShutterAV
import ShutterCore
import ShutterStorage

/// The film while it is encoded: CShutterAV's writer on a hidden file (fragmented MP4, as a
/// clip's), one frame per photo at 1/fps s each, no sound.
final class TimelapseFile {
    let path: String
    private let fd: Int32
    private var writer: OpaquePointer?
    private let fps: Int
    private(set) var frames = 0

    init(path: String, size: PixelSize, settings: TimelapseSettings) throws(TimelapseError) {
        self.path = path
        fps = settings.fps
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o640)
        if fd < 0 { throw TimelapseMaker.ioError(errno, "open", path) }
        self.fd = fd
        var cfg = sav_config()
        cfg.width = Int32(size.width)
        cfg.height = Int32(size.height)
        cfg.input_format = Int32(SAV_PIX_I420.rawValue)
        cfg.fps = Int32(settings.fps)
        cfg.gop = Int32(settings.fps)
        cfg.video_bitrate = Int64(settings.videoBitrate)
        cfg.crf = Int32(settings.crf)
        cfg.threads = Int32(settings.threads)
        cfg.audio_channels = 0
        cfg.rotation = Int32(settings.labels.rotation)
        cfg.hflip = settings.labels.hflip ? 1 : 0
        cfg.vflip = settings.labels.vflip ? 1 : 0
        let labels = settings.labels
        var errbuf = [CChar](repeating: 0, count: 256)
        var w: OpaquePointer?
        let r = settings.videoEncoder.withCString { enc in
            settings.preset.withCString { preset in
                labels.make.withCString { make in
                    labels.model.withCString { model in
                        labels.software.withCString { software in
                            cfg.video_encoder = enc
                            cfg.preset = preset
                            cfg.make = make
                            cfg.model = model
                            cfg.software = software
                            return sav_writer_open(&cfg, fd, &w, &errbuf, errbuf.count)
                        }
                    }
                }
            }
        }
        guard r >= 0, let w else {
            let e = errno
            close(fd)
            unlink(path)
            if r == -Int32(SAV_ERR_IO.rawValue) { throw TimelapseMaker.ioError(e == 0 ? EIO : e, "write", path) }
            let detail = String(decoding: errbuf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw TimelapseError(.encoderFailed, "the encoder \(settings.videoEncoder) would not start for a "
                                 + "\(size) film: \(detail.isEmpty ? "code \(r)" : detail)")
        }
        writer = w
    }

    deinit {
        if let writer { sav_writer_free(writer) }
        close(fd)
    }

    /// The next frame: the picture shown for 1/fps s.
    func frame(_ p: I420) throws(TimelapseError) {
        guard let writer else { return }
        let pts = Int64(frames) * 90_000 / Int64(fps)
        let w = p.size.width
        let strides: [Int32] = [Int32(w), Int32(w / 2), Int32(w / 2)]
        let r = p.y.withUnsafeBufferPointer { y in
            p.u.withUnsafeBufferPointer { u in
                p.v.withUnsafeBufferPointer { v in
                    let planes: [UnsafePointer<UInt8>?] = [y.baseAddress, u.baseAddress, v.baseAddress]
                    return planes.withUnsafeBufferPointer { pl in
                        strides.withUnsafeBufferPointer { s in sav_writer_video(writer, pl.baseAddress, s.baseAddress, pts) }
                    }
                }
            }
        }
        try check(r)
        frames += 1
    }

    /// The encoder flushed and the file's end written (not synced: it is copied next).
    func finish() throws(TimelapseError) {
        guard let w = writer else { return }
        let r = sav_writer_finish(w)
        try check(r)
        sav_writer_free(w)
        writer = nil
    }

    private func check(_ r: Int32) throws(TimelapseError) {
        guard r < 0 else { return }
        if r == -Int32(SAV_ERR_IO.rawValue), let writer {
            throw TimelapseMaker.ioError(sav_writer_io_errno(writer), "write", path)
        }
        var buf = [CChar](repeating: 0, count: 128)
        sav_strerror(r, &buf, buf.count)
        let text = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        throw TimelapseError(.encoderFailed, "encoding the film failed: \(text)")
    }
}
