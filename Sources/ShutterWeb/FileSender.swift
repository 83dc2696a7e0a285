#if canImport(Glibc)
import Glibc
#endif
import CExif
import Foundation
import ShutterStorage

/// Sends a photo or clip named by its DCF number (`/files/1000001`): the file by
/// libmicrohttpd's fd response (sendfile), a single `Range` honoured; and
/// thumbnails: a photo's EXIF thumbnail, a clip's `.THM` poster frame.
enum FileSender {
    static func send(_ storage: Storage, _ text: String, range: String?) -> WebResponse {
        guard let n = DCFNumber(webNumber: Substring(text)), let item = storage.media(n) else {
            return .error(404, "no such file")
        }
        let fd = open(item.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return .error(404, "no such file") }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { close(fd); return .error(404, "no such file") }
        let size = UInt64(st.st_size)
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
        let bytes: Data?
        switch item.kind {
        case .photo: bytes = exifThumbnail(item.path)
        case .video: bytes = item.posterPath.flatMap { try? Data(contentsOf: URL(fileURLWithPath: $0)) }
        }
        guard let bytes, !bytes.isEmpty else { return .error(404, "\(item.fileName) has no thumbnail") }
        return WebResponse(status: 200, contentType: "image/jpeg", body: .bytes(bytes),
                           headers: [("Cache-Control", "private, max-age=3600")])
    }

    /// The JPEG thumbnail in a photo's EXIF (libexif reads only the APP1 segment).
    static func exifThumbnail(_ path: String) -> Data? {
        guard let loader = exif_loader_new() else { return nil }
        defer { exif_loader_unref(loader) }
        exif_loader_write_file(loader, path)
        guard let data = exif_loader_get_data(loader) else { return nil }
        defer { exif_data_unref(data) }
        guard let thumb = data.pointee.data, data.pointee.size > 0 else { return nil }
        return Data(bytes: thumb, count: Int(data.pointee.size))
    }
}
