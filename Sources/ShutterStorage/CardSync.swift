// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import CShutterSys

/// How Shutter fsyncs a file or folder on the card. `Storage` carries one
/// (`Storage.cardSync`), and every sync of the card's files goes through it, so a
/// test can stand in for a card whose syncs hang (an SD card mid-erase, a dying USB
/// stick) by building its service's storage with a `hold`, which runs before each
/// sync on the thread that syncs. The service's holds nothing (`CardSync()`).
public struct CardSync: Sendable {
    private let hold: (@Sendable (String) -> Void)?

    /// `hold` runs before every sync (nil: none); it is told the path synced.
    public init(hold: (@Sendable (String) -> Void)? = nil) {
        self.hold = hold
    }

    /// fsync(2) of `fd` (the file or folder `path`), after the hold if any.
    public func fsync(_ fd: Int32, path: String) -> Int32 {
        hold?(path)
        return Glibc.fsync(fd)
    }

    /// syncfs(2): everything written to the file system of `fd` (the folder `path`), after the hold.
    public func syncfs(_ fd: Int32, path: String) -> Int32 {
        hold?(path)
        return shutter_syncfs(fd)
    }
}
