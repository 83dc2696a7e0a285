#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterCore

/// The finished photos and clips on the card, by DCF number: what the web page
/// lists, sends and deletes. Files are found by their number, never by a path a
/// client wrote, so nothing outside DCIM can be named.
public struct MediaItem: Equatable, Sendable {
    public var number: DCFNumber
    public var kind: Storage.MediaKind
    public var path: String
    public var bytes: UInt64
    /// Modification time, seconds since 1970 (the wall clock's word: it may have jumped).
    public var modified: Double
    /// The clip's poster frame (`SHTR0002.THM` beside it), when there is one.
    public var posterPath: String?

    /// "SHTR0001.JPG".
    public var fileName: String { number.fileName(extension: kind.fileExtension) }
}

extension DCFNumber {
    /// The number as one integer, directory then file: 1000001 for 100SHUTR/SHTR0001.
    public var webNumber: Int { directory * 10000 + file }

    /// Reads `webNumber`'s form: exactly seven ASCII digits naming a valid number.
    public init?(webNumber text: Substring) {
        guard text.utf8.count == 7, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let n = Int(text) else { return nil }
        self.init(directory: n / 10000, file: n % 10000)
    }
}

extension Storage {
    /// Finished photos and clips (not being recorded), newest (highest number) first.
    public func finishedMedia() -> [MediaItem] {
        let fm = FileManager.default
        var out: [MediaItem] = []
        for dirName in (try? fm.contentsOfDirectory(atPath: dcim)) ?? [] {
            guard let d = DCFNumber.directoryNumber(dirName) else { continue }
            for name in (try? fm.contentsOfDirectory(atPath: (dcim as NSString).appendingPathComponent(dirName))) ?? [] {
                guard let (f, ext) = DCFNumber.fileNumber(name), ext == "JPG" || ext == "MP4",
                      let n = DCFNumber(directory: d, file: f), let item = media(n) else { continue }
                out.append(item)
            }
        }
        return out.sorted { $0.number > $1.number }
    }

    /// The finished photo or clip with this number, nil when there is none (or it is being recorded).
    public func media(_ number: DCFNumber) -> MediaItem? {
        guard !isBeingWritten(number) else { return nil }
        let dir = (dcim as NSString).appendingPathComponent(number.directoryName)
        for kind in [MediaKind.photo, .video] {
            let path = (dir as NSString).appendingPathComponent(number.fileName(extension: kind.fileExtension))
            var st = stat()
            // lstat: a symlink planted in DCIM is not followed out of it.
            guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            // A clip of zero bytes is a name reserved by a recording that has not written yet.
            if kind == .video && st.st_size == 0 { continue }
            let poster = (dir as NSString).appendingPathComponent(number.fileName(extension: "THM"))
            var pst = stat()
            let hasPoster = kind == .video && lstat(poster, &pst) == 0 && (pst.st_mode & S_IFMT) == S_IFREG
            return MediaItem(number: number, kind: kind, path: path, bytes: UInt64(st.st_size),
                             modified: Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9,
                             posterPath: hasPoster ? poster : nil)
        }
        return nil
    }

    public enum DeleteOutcome: Equatable, Sendable { case deleted, notFound, beingWritten }

    /// Deletes a finished photo or clip (and a clip's poster), durably. Never the
    /// clip being recorded: its number is active until the recorder lets it go.
    public func deleteMedia(_ number: DCFNumber) throws(StorageError) -> DeleteOutcome {
        if isBeingWritten(number) { return .beingWritten }
        guard let item = media(number) else { return .notFound }
        do throws(SystemError) {
            if unlink(item.path) != 0 { throw SystemError(errno: errno, call: "unlink", path: item.path) }
            if let poster = item.posterPath { unlink(poster) }
            try AtomicFile.fsyncDirectory((item.path as NSString).deletingLastPathComponent)
        } catch {
            throw StorageError(error)
        }
        return .deleted
    }
}
