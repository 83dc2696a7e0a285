// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
@testable import ShutterStorage
import XCTest

/// The web page's files are reached below DCIM without following a link (issue 23 item 2),
/// on a real directory tree with real symlinks.
final class MediaLibraryTests: XCTestCase {
    var base = ""
    let fm = FileManager.default

    override func setUpWithError() throws {
        var template = Array("/tmp/shutter-media-XXXXXX".utf8CString)
        base = String(cString: try XCTUnwrap(mkdtemp(&template)))
    }

    override func tearDownWithError() throws { try? fm.removeItem(atPath: base) }

    func write(_ path: String, _ text: String) throws {
        try fm.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    func storage(_ root: String) -> Storage { Storage(root: root, budget: CaptureBudget(photoBytes: 1, videoBytes: 1)) }

    func read(_ opened: (item: MediaItem, fd: Int32)?) -> String? {
        guard let opened else { return nil }
        defer { close(opened.fd) }
        return FileDescriptorReader.readAll(opened.fd, limit: 1 << 20).map { String(decoding: $0, as: UTF8.self) }
    }

    func testLinksBelowDCIMAreNeverFollowed() throws {
        let root = base + "/card", dcim = root + "/DCIM", outside = base + "/outside"
        try write(dcim + "/100SHUTR/SHTR0001.JPG", "photo one")
        try write(dcim + "/100SHUTR/SHTR0003.MP4", "clip three")
        try write(outside + "/SHTR0005.JPG", "outside photo")
        try write(outside + "/SHTR0006.MP4", "outside clip")
        try write(outside + "/SHTR0006.THM", "outside poster")
        try write(outside + "/poster.jpg", "outside poster for 3")
        // A DCF directory that is a link out of DCIM, a photo that is a link, a clip's poster that is a link.
        try fm.createSymbolicLink(atPath: dcim + "/998SHUTR", withDestinationPath: outside)
        try fm.createSymbolicLink(atPath: dcim + "/100SHUTR/SHTR0002.JPG", withDestinationPath: outside + "/SHTR0005.JPG")
        try fm.createSymbolicLink(atPath: dcim + "/100SHUTR/SHTR0003.THM", withDestinationPath: outside + "/poster.jpg")
        let s = storage(root)

        XCTAssertEqual(s.finishedMedia().map(\.number.webNumber), [1000003, 1000001], "only the real files are listed")
        XCTAssertEqual(s.media(DCFNumber(directory: 100, file: 3)!)?.hasPoster, false, "a linked poster is no poster")
        XCTAssertEqual(read(s.openMedia(DCFNumber(directory: 100, file: 1)!)), "photo one")
        for n in [DCFNumber(directory: 998, file: 5)!, DCFNumber(directory: 998, file: 6)!, DCFNumber(directory: 100, file: 2)!] {
            XCTAssertNil(s.media(n), "\(n)")
            XCTAssertNil(read(s.openMedia(n)), "\(n)")
            XCTAssertNil(s.poster(n), "\(n)")
            XCTAssertEqual(try s.deleteMedia(n), .notFound, "\(n)")
        }
        XCTAssertNil(s.poster(DCFNumber(directory: 100, file: 3)!), "a linked poster is not read")

        XCTAssertEqual(try s.deleteMedia(DCFNumber(directory: 100, file: 3)!), .deleted)
        XCTAssertFalse(fm.fileExists(atPath: dcim + "/100SHUTR/SHTR0003.MP4"))
        for name in ["SHTR0005.JPG", "SHTR0006.MP4", "SHTR0006.THM", "poster.jpg"] {
            XCTAssertTrue(fm.fileExists(atPath: outside + "/" + name), "\(name) outside DCIM is untouched")
        }
        for link in ["998SHUTR", "100SHUTR/SHTR0002.JPG"] {
            XCTAssertNotNil(try? fm.destinationOfSymbolicLink(atPath: dcim + "/" + link), "the link \(link) itself is left alone")
        }
    }

    func testALinkedDCIMIsNotFollowed() throws {
        let real = base + "/real"
        try write(real + "/DCIM/100SHUTR/SHTR0001.JPG", "photo one")
        try fm.createDirectory(atPath: base + "/card", withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: base + "/card/DCIM", withDestinationPath: real + "/DCIM")
        let s = storage(base + "/card")
        let one = DCFNumber(directory: 100, file: 1)!
        XCTAssertEqual(s.finishedMedia(), [])
        XCTAssertNil(s.media(one))
        XCTAssertNil(read(s.openMedia(one)))
        XCTAssertEqual(try s.deleteMedia(one), .notFound)
        XCTAssertTrue(fm.fileExists(atPath: real + "/DCIM/100SHUTR/SHTR0001.JPG"))
        // The configured root itself may be a link (to the card's mount point): that is the admin's word.
        try fm.createSymbolicLink(atPath: base + "/mount", withDestinationPath: real)
        XCTAssertEqual(read(storage(base + "/mount").openMedia(one)), "photo one")
    }

    func testAFIFONamedLikeAPhotoDoesNotHang() throws {
        let dir = base + "/card/DCIM/100SHUTR"
        try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
        XCTAssertEqual(mkfifo(dir + "/SHTR0001.JPG", 0o600), 0)
        let s = storage(base + "/card")
        XCTAssertNil(s.openMedia(DCFNumber(directory: 100, file: 1)!))
        XCTAssertEqual(s.finishedMedia(), [])
    }
}
