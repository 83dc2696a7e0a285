// SPDX-License-Identifier: BSD-2-Clause
import CShutterAV
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterStorage

/// The finish of a clip: the fragmented MP4 written while recording (playable up to its
/// last synced fragment after a power cut) becomes a regular MP4 — one `moov` with full
/// sample tables, no `moof`/`mfra` — which Android's player, Windows and messengers read
/// for duration and seeking.
///
/// By stream copy (libavformat, FFmpeg 5.1 and 7.x alike) into a hidden file beside the
/// clip, fsync, then rename over it and fsync the folder. At every instant one of the two
/// is whole under the clip's name: the fragmented file until the rename, the finished one
/// after it. A leftover temporary file (a kill or power cut mid-finish) is removed at the
/// next start (`removeLeftovers`) and the clip, still fragmented, is finished again.
/// The media data is written once more (bytes ≈ the clip's size); the fragmented data is
/// not read twice. An in-place rewrite (FFmpeg 7.1's `hybrid_fragmented`) avoids the copy
/// but needs 7.1, and bookworm has 5.1.
public enum RegularMP4 {
    public struct Figures: Sendable, Equatable {
        /// Bytes of the finished file (all written by the finish).
        public var bytesWritten: Int64
        /// The fragmented file's size.
        public var sourceBytes: Int64
        public var duration: Duration
    }

    /// The points of a finish its caller is told of (`finish(path:reached:)`): after the
    /// finished copy is synced, before the rename; after the rename, before the folder sync.
    /// (`shutterd --debug-stall-finish STEP` stops there, for a kill or a power cut.)
    public enum Step: String, Sendable, CaseIterable {
        case beforeRename = "before-rename"
        case afterRename = "after-rename"
    }

    static let temporarySuffix = ".finishing"

    /// The hidden file the finish writes beside `path` (`DCIM/100SHUTR/.SHTR0002.MP4.finishing`).
    public static func temporaryPath(for path: String) -> String {
        let dir = PlainIO.deletingLastComponent(path)
        return PlainIO.path(dir, "." + PlainIO.lastComponent(path) + temporarySuffix)
    }

    /// True when the file has a top-level `moof` (it is still fragmented).
    public static func isFragmented(_ path: String) throws -> Bool {
        try topLevelBoxes(path).contains("moof")
    }

    /// The types of the file's top-level boxes, in order.
    public static func topLevelBoxes(_ path: String) throws -> [String] {
        let fd = try retryingEINTR("open", path: path) { open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        var st = stat()
        try retryingEINTR("fstat", path: path) { fstat(fd, &st) }
        return try FragmentedMP4Recovery.boxes(fd: fd, size: Int64(st.st_size), path: path).map(\.type)
    }

    /// Finishes the clip at `path`; nil when it is already regular. `reached` is told of
    /// each `Step` as the finish passes it, on the calling thread. `sync`: how the folder
    /// is synced after the rename (the storage's `cardSync`).
    /// Throws `RecordingError` (`.noSpace`, `.ioError`, `.encoderFailed`); the fragmented
    /// clip is then left as it was and the temporary file removed.
    @discardableResult
    public static func finish(path: String, sync: CardSync = CardSync(),
                              reached: (Step) -> Void = { _ in }) throws(RecordingError) -> Figures? {
        let began = SystemClock().now()
        let fragmented: Bool
        do { fragmented = try isFragmented(path) } catch {
            throw RecordingError(.ioError, "cannot read \(path) to finish it: \(error)")
        }
        guard fragmented else { return nil }
        var st = stat()
        guard stat(path, &st) == 0 else { throw SegmentFile.ioError(errno, "stat", path) }
        let temp = temporaryPath(for: path)
        unlink(temp)
        var written: Int64 = 0
        var errbuf = [CChar](repeating: 0, count: 256)
        let r = sav_remux_regular(path, temp, &written, &errbuf, errbuf.count)
        if r < 0 {
            let e = errno
            unlink(temp)
            if r == -Int32(SAV_ERR_IO.rawValue) { throw SegmentFile.ioError(e == 0 ? EIO : e, "write", temp) }
            let detail = String(decoding: errbuf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw RecordingError(.encoderFailed, "finishing \(path) failed: \(detail); it stays a fragmented MP4")
        }
        do throws(SystemError) {
            let fd = try typedEINTR("open", path: temp) { open(temp, O_RDONLY | O_CLOEXEC) }
            defer { close(fd) }
            try typedEINTR("fsync", path: temp) { fsync(fd) }
        } catch {
            unlink(temp)
            throw SegmentFile.ioError(error.errno, error.call, temp)
        }
        reached(.beforeRename)
        // A clip deleted meanwhile (the page, the low-space policy) is not brought back.
        guard access(path, F_OK) == 0 else {
            unlink(temp)
            throw RecordingError(.ioError, "\(path) was deleted while it was being finished")
        }
        guard rename(temp, path) == 0 else {
            let e = errno
            unlink(temp)
            throw SegmentFile.ioError(e, "rename", path)
        }
        reached(.afterRename)
        do { try AtomicFile.fsyncDirectory(PlainIO.deletingLastComponent(path), sync: sync) } catch {
            RecordingLog.warning("fsync of the directory of \(path) failed: \(error)")
        }
        return Figures(bytesWritten: written, sourceBytes: Int64(st.st_size), duration: SystemClock().now() - began)
    }

    /// Removes the temporary files of finishes cut off by a kill or a power cut in `dir`
    /// (the clips themselves are whole). Returns the clips whose finish was cut off.
    @discardableResult
    public static func removeLeftovers(in dir: String) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return [] }
        var clips: [String] = []
        for n in names where n.hasPrefix(".") && n.hasSuffix(temporarySuffix) {
            unlink(PlainIO.path(dir, n))
            let clip = String(n.dropFirst().dropLast(temporarySuffix.count))
            clips.append(PlainIO.path(dir, clip))
        }
        return clips.sorted()
    }
}
