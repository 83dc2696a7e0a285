// SPDX-License-Identifier: BSD-2-Clause
import CShutterSys

/// Moves a finished file to its final name only if that name is free, so a
/// stale counter or a second writer can never clobber a photo.
/// `renameat2(RENAME_NOREPLACE)` (atomic; FAT supports it too) through
/// CShutterSys, since Swift's Glibc module does not export it; where the
/// kernel or file system refuses the flag, `link` + `unlink` (also exclusive).
public enum ExclusivePlacement {
    /// Throws `SystemError` with errno EEXIST when `destination` exists;
    /// `source` is then left in place for the caller to remove or retry.
    /// `allowRenameat2: false` takes the fallback path (for tests).
    public static func move(_ source: String, to destination: String, allowRenameat2: Bool = true) throws(SystemError) {
        let r = allowRenameat2 ? shutter_rename_noreplace(source, destination)
                               : shutter_link_noreplace(source, destination)
        if r < 0 { throw SystemError(errno: -r, call: allowRenameat2 ? "renameat2" : "link", path: destination) }
    }
}
