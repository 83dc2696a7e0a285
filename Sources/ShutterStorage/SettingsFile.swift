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

/// The runtime settings' state file, `<root>/.shutter-settings.json`, beside
/// the file counter: what `shutterctl set` changed, so it survives a restart.
/// Written like the counter (temp, fsync, rename over the old one, directory
/// fsync): a crash leaves the old file or the new one, never half of one.
/// What it means is `RuntimeSettings`' business; this only moves its text.
public enum SettingsFile {
    public static let fileName = ".shutter-settings.json"
    /// Where a file that cannot be read as settings is moved, for a person to look at.
    public static let corruptSuffix = ".corrupt"

    public static func path(root: String) -> String { PlainIO.path(root, fileName) }

    /// The file's text; nil when there is none. Throws for a file that exists
    /// and cannot be read, or is not UTF-8 (both: set it aside).
    public static func read(root: String) throws(SystemError) -> String? {
        let p = path(root: root)
        // A settings file is a few hundred bytes; a huge one is not ours.
        guard let bytes = try AtomicFile.read(p, limit: 1_048_576) else { return nil }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw SystemError(errno: EILSEQ, call: "read", path: p)
        }
        return text
    }

    /// Durably replaces the file with `text`, synced through `sync` (the storage's).
    public static func write(_ text: String, root: String, sync: CardSync = CardSync()) throws(SystemError) {
        let p = path(root: root)
        do {
            try Array(text.utf8).withUnsafeBytes { bytes in
                try AtomicFile.write(to: p, placement: .replacing, sync: sync, bytes: bytes)
            }
        } catch let e as SystemError {
            throw e
        } catch {
            throw SystemError(errno: EIO, call: "write", path: p)
        }
    }

    /// Moves the file to `<name>.corrupt` (replacing an older one); returns that path.
    @discardableResult
    public static func setAside(root: String) throws(SystemError) -> String {
        let p = path(root: root)
        let aside = p + corruptSuffix
        try typedEINTR("rename", path: p) { rename(p, aside) }
        return aside
    }
}
