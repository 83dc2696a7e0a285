// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterStorage

extension Storage {
    /// A file's thumbnail as the page's `/files/N/thumbnail` sends it (a photo's EXIF
    /// thumbnail, a clip's `.THM` poster), for others that show the last capture (MQTT).
    public func thumbnail(_ number: DCFNumber) -> Data? {
        guard let item = media(number) else { return nil }
        switch item.kind {
        case .photo: return openMedia(number).flatMap { FileSender.exifThumbnail(fd: $0.fd) }
        case .video: return item.hasPoster ? poster(number) : nil
        }
    }
}
