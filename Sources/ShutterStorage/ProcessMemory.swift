// SPDX-License-Identifier: BSD-2-Clause
import CShutterSys
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// An encoder's buffers (x264 at 1080p is ~100 MB) go back to malloc when a clip
/// ends; this hands the free pages back to the kernel so an idle camera stays
/// small (glibc's malloc_trim(0), through CShutterSys: <malloc.h> is not in
/// Swift's Glibc module). Call it off the actor, after the encoder is gone.
public func releaseFreedMemory() {
    shutter_release_free_memory()
}

/// What this process holds in memory, for `status`: a camera that runs for months
/// must keep its heap flat, and the soak test reads these figures back.
public enum ProcessMemory {
    /// Caps malloc's arenas (call once, early). GStreamer's streaming threads come and go
    /// with every RTSP media; with an arena each (glibc's default allows 8 per core), the
    /// pages they freed stayed resident: 200 viewers in turn left +9.9 MB resident with
    /// the default, +5.6 MB with 2 (docs/performance.md).
    public static func limitArenas(to count: Int) {
        shutter_limit_malloc_arenas(Int32(count))
    }

    /// Bytes malloc has handed out and not had back (mallinfo2), nil where glibc cannot tell.
    /// The figure a leak moves: unlike RSS, it does not follow the allocator's free pages.
    public static var heapInUse: Int? {
        let n = shutter_heap_in_use()
        return n < 0 ? nil : Int(n)
    }

    /// Resident set size (VmRSS of /proc/self/status), nil when it cannot be read.
    public static var resident: Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }.map { $0 * 1024 }
        }
        return nil
    }
}
