// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterCore

/// The finished photos and clips on the card, by DCF number: what the web page
/// lists, sends and deletes. Files are found by their number, never by a path a
/// client wrote. Each use opens DCIM once and reaches the DCF directory and the
/// file below it one component at a time with `O_NOFOLLOW` (`openat`, `fstatat`,
/// `unlinkat` on that fd): a link anywhere below the storage root (DCIM itself, a
/// DCF directory, a file, a poster) is never followed, so nothing outside DCIM can
/// be read, listed or deleted (issue 23). The components are fixed DCF names, never
/// "..", so per-component O_NOFOLLOW is all `openat2`'s RESOLVE_BENEATH would add.
public struct MediaItem: Equatable, Sendable {
    public var number: DCFNumber
    public var kind: Storage.MediaKind
    public var bytes: UInt64
    /// Modification time, seconds since 1970 (the wall clock's word: it may have jumped).
    public var modified: Double
    /// The clip has a poster frame (`SHTR0002.THM` beside it, a regular file).
    public var hasPoster: Bool

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
        guard let dcim = DirectoryHandle.dcim(of: self) else { return [] }
        var out: [MediaItem] = []
        var seen = Set<DCFNumber>()
        for dirName in dcim.names() {
            guard let d = DCFNumber.directoryNumber(dirName), let dir = dcim.subdirectory(dirName) else { continue }
            for name in dir.names() {
                guard let (f, ext) = DCFNumber.fileNumber(name), ext == "JPG" || ext == "MP4",
                      let n = DCFNumber(directory: d, file: f), seen.insert(n).inserted,
                      let item = media(n, dcim: dcim) else { continue }
                out.append(item)
            }
        }
        return out.sorted { $0.number > $1.number }
    }

    /// The finished photo or clip with this number, nil when there is none (or it is being recorded).
    public func media(_ number: DCFNumber) -> MediaItem? {
        DirectoryHandle.dcim(of: self).flatMap { media(number, dcim: $0) }
    }

    private func media(_ number: DCFNumber, dcim: DirectoryHandle) -> MediaItem? {
        guard !isBeingWritten(number), let dir = dcim.subdirectory(number.directoryName) else { return nil }
        return media(number, in: dir).map(\.item)
    }

    /// The item and its file's name in its (open) DCF directory.
    private func media(_ number: DCFNumber, in dir: DirectoryHandle) -> (item: MediaItem, name: String)? {
        for kind in [MediaKind.photo, .video] {
            let name = number.fileName(extension: kind.fileExtension)
            guard let st = dir.regularFile(name) else { continue }
            // A clip of zero bytes is a name reserved by a recording that has not written yet.
            if kind == .video && st.st_size == 0 { continue }
            let hasPoster = kind == .video && dir.regularFile(number.fileName(extension: "THM")) != nil
            return (MediaItem(number: number, kind: kind, bytes: UInt64(st.st_size),
                              modified: Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9,
                              hasPoster: hasPoster), name)
        }
        return nil
    }

    /// The photo or clip opened for reading (the caller closes `fd`); its size is the open file's.
    public func openMedia(_ number: DCFNumber) -> (item: MediaItem, fd: Int32)? {
        guard !isBeingWritten(number), let dir = DirectoryHandle.dcim(of: self)?.subdirectory(number.directoryName),
              let (item, name) = media(number, in: dir), let (fd, st) = dir.openRegularFile(name) else { return nil }
        var opened = item
        opened.bytes = UInt64(st.st_size)
        return (opened, fd)
    }

    /// A clip's poster frame (at most `limit` bytes), read through the DCF directory's fd.
    public func poster(_ number: DCFNumber, limit: Int = 4 << 20) -> Data? {
        guard !isBeingWritten(number), let dir = DirectoryHandle.dcim(of: self)?.subdirectory(number.directoryName),
              let (fd, st) = dir.openRegularFile(number.fileName(extension: "THM")) else { return nil }
        defer { close(fd) }
        guard st.st_size > 0, st.st_size <= limit else { return nil }
        return FileDescriptorReader.readAll(fd, limit: limit)
    }

    public enum DeleteOutcome: Equatable, Sendable { case deleted, notFound, beingWritten }

    /// Deletes a finished photo or clip (and a clip's poster), durably. Never the
    /// clip being recorded: its number is active until the recorder lets it go.
    public func deleteMedia(_ number: DCFNumber) throws(StorageError) -> DeleteOutcome {
        if isBeingWritten(number) { return .beingWritten }
        guard let dir = DirectoryHandle.dcim(of: self)?.subdirectory(number.directoryName),
              let (item, name) = media(number, in: dir) else { return .notFound }
        do throws(SystemError) {
            // unlinkat never follows a link: at worst it removes a name in this directory.
            if unlinkat(dir.fd, name, 0) != 0 {
                throw SystemError(errno: errno, call: "unlinkat", path: "\(number.directoryName)/\(name)")
            }
            if item.hasPoster { unlinkat(dir.fd, number.fileName(extension: "THM"), 0) }
            if cardSync.fsync(dir.fd, path: number.directoryName) != 0 { throw SystemError(errno: errno, call: "fsync", path: number.directoryName) }
        } catch {
            throw StorageError(error)
        }
        return .deleted
    }
}
