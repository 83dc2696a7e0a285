// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import CExif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ShutterStorage

/// Sends a photo or clip named by its DCF number (`/files/1000001`): the file by
/// libmicrohttpd's fd response (sendfile), a single `Range` honoured; and
/// thumbnails: a photo's EXIF thumbnail, a clip's `.THM` poster frame.
enum FileSender {
    static func send(_ storage: Storage, _ text: String, range: String?) -> WebResponse {
        guard let n = DCFNumber(webNumber: Substring(text)), let (item, fd) = storage.openMedia(n) else {
            return .error(404, "no such file")
        }
        let size = item.bytes
        let type = item.kind == .photo ? "image/jpeg" : "video/mp4"
        var headers = [("Accept-Ranges", "bytes"), ("Cache-Control", "private, max-age=3600"),
                       ("Content-Disposition", "inline; filename=\"\(item.fileName)\"")]
        switch ByteRange.answer(range, size: size) {
        case .whole:
            return WebResponse(status: 200, contentType: type, body: .file(fd: fd, offset: 0, length: size), headers: headers)
        case .part(let start, let end):
            headers.append(("Content-Range", "bytes \(start)-\(end)/\(size)"))
            return WebResponse(status: 206, contentType: type, body: .file(fd: fd, offset: start, length: end - start + 1),
                               headers: headers)
        case .unsatisfiable:
            close(fd)
            return WebResponse.error(416, "range not satisfiable (the file has \(size) bytes)")
                .with(header: ("Content-Range", "bytes */\(size)"))
        }
    }

    static func thumbnail(_ storage: Storage, _ text: String) -> WebResponse {
        guard let n = DCFNumber(webNumber: Substring(text)), let item = storage.media(n) else {
            return .error(404, "no such file")
        }
        // Both read through an fd opened below DCIM without following links (MediaLibrary).
        let bytes: Data?
        switch item.kind {
        case .photo: bytes = storage.openMedia(n).flatMap { exifThumbnail(fd: $0.fd) }
        case .video: bytes = item.hasPoster ? storage.poster(n) : nil
        }
        guard let bytes, !bytes.isEmpty else { return .error(404, "\(item.fileName) has no thumbnail") }
        return WebResponse(status: 200, contentType: "image/jpeg", body: .bytes(bytes),
                           headers: [("Cache-Control", "private, max-age=3600")])
    }

    /// The JPEG thumbnail in a photo's EXIF, from an open photo (closed here). libexif's
    /// loader takes the file's start until it has the APP1 segment (at most 64 KiB),
    /// as `exif_loader_write_file` does, but from this fd rather than a path.
    static func exifThumbnail(fd: Int32) -> Data? {
        defer { close(fd) }
        guard let loader = exif_loader_new() else { return nil }
        defer { exif_loader_unref(loader) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var total = 0
        while total < 256 * 1024 {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            total += n
            let more = buffer.withUnsafeMutableBytes {
                exif_loader_write(loader, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(n))
            }
            if more == 0 { break }
        }
        guard let data = exif_loader_get_data(loader) else { return nil }
        defer { exif_data_unref(data) }
        guard let thumb = data.pointee.data, data.pointee.size > 0 else { return nil }
        return Data(bytes: thumb, count: Int(data.pointee.size))
    }
}
