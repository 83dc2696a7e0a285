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

/// The persistent file-number counter, `<root>/.shutter-counter`: one line
/// `next 100SHUTR/SHTR0042` (or `next none` when every number is used).
/// Written through AtomicFile (temp, fsync, rename over the old counter,
/// directory fsync) *before* a number is handed out, so a crash can lose a
/// number but never reuse one.
/// Numbers never come from the wall clock, which may jump (no RTC).
enum MediaCounter {
    static let fileName = ".shutter-counter"

    static func path(root: String) -> String { PlainIO.path(root, fileName) }

    /// The next ordinal stored, or nil when the file is absent or unreadable
    /// as a counter (the scan of existing files then decides alone).
    static func read(root: String) throws(SystemError) -> Int? {
        let bytes: [UInt8]
        do {
            guard let b = try AtomicFile.read(path(root: root), limit: 128) else { return nil }
            bytes = b
        } catch where error.errno == EFBIG {
            return nil  // longer than a counter line: not one; the scan decides alone
        }
        let text = String(decoding: bytes, as: UTF8.self).trimmedWhitespace
        guard text.hasPrefix("next ") else { return nil }
        let value = String(text.dropFirst(5))
        if value == "none" { return DCFNumber.count }
        return DCFNumber(text: value)?.ordinal
    }

    /// Durably stores the next ordinal (`DCFNumber.count` = none left).
    static func write(next ordinal: Int, root: String, sync: CardSync) throws(SystemError) {
        let line = "next " + (DCFNumber(ordinal: ordinal).map(\.description) ?? "none") + "\n"
        do {
            try Array(line.utf8).withUnsafeBytes { bytes in
                try AtomicFile.write(to: path(root: root), placement: .replacing, sync: sync, bytes: bytes)
            }
        } catch let e as SystemError {
            throw e
        } catch {
            throw SystemError(errno: EIO, call: "write", path: path(root: root))
        }
    }

    /// The highest number among existing `NNNSHUTR/SHTRnnnn.*` files, any
    /// extension. With `cleanUp`, also removes the temp files of photos whose
    /// writer died (a crash before the rename); a live writer's are left alone.
    /// Empty video placeholders are kept: another live writer may own one.
    static func highestExisting(dcim: String, cleanUp: Bool) -> DCFNumber? {
        let fm = FileManager.default
        var best: DCFNumber?
        for dirName in (try? fm.contentsOfDirectory(atPath: dcim)) ?? [] {
            guard let d = DCFNumber.directoryNumber(dirName) else { continue }
            let dir = PlainIO.path(dcim, dirName)
            for name in (try? fm.contentsOfDirectory(atPath: dir)) ?? [] {
                if cleanUp, let pid = tempFileOwner(name), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH {
                    unlink(PlainIO.path(dir, name))
                    continue
                }
                guard let (f, _) = DCFNumber.fileNumber(name), let n = DCFNumber(directory: d, file: f) else { continue }
                if best.map({ n > $0 }) ?? true { best = n }
            }
        }
        return best
    }

    /// The pid in an `AtomicFile` temp name `.SHTR0001.JPG.tmp-1234`.
    static func tempFileOwner(_ name: String) -> pid_t? {
        guard name.hasPrefix(".\(DCFNumber.filePrefix)"), let r = name.ranges(of: ".tmp-").last else {
            return nil
        }
        return pid_t(name[r.upperBound...])
    }
}
