// SPDX-License-Identifier: BSD-2-Clause
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterMedia
import ShutterStorage

/// Makes each finished clip a regular MP4 (RegularMP4), after the capture machine is
/// idle again: the finish holds up no press, only the reply of the request that made
/// the clip, which then names files in their final form. One at a time, on its own
/// queue (never the loop, never the task pool).
enum ClipFinisher {
    static let queue = DispatchQueue(label: "shutter.clip.regular")

    /// Finishes `paths` in order. Returns one line per clip that stays fragmented (why).
    /// `reached`: each finish's steps as it passes them (`ServiceHooks.finishReached`).
    static func finish(_ paths: [String], storage: Storage, log: Log,
                       reached: (RegularMP4.Step) -> Void) -> [String] {
        var problems: [String] = []
        for path in paths {
            if let problem = finish(path, storage: storage, log: log, reached: reached) { problems.append(problem) }
        }
        return problems
    }

    /// One clip: nil when it is regular now (or was already), else why it is not.
    static func finish(_ path: String, storage: Storage, log: Log, reached: (RegularMP4.Step) -> Void) -> String? {
        let name = PlainIO.lastComponent(path)
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }  // deleted meanwhile: nothing to finish
        do throws(StorageError) {
            try storage.ensureRoom(toFinish: UInt64(st.st_size))
        } catch {
            let line = "\(name) stays a fragmented MP4 (it plays, but some players show no duration): \(error.message)"
            log.warning(line)
            return line
        }
        do throws(RecordingError) {
            guard let f = try RegularMP4.finish(path: path, sync: storage.cardSync, reached: reached) else { return nil }
            log.info("finished \(name) as a regular MP4: \(f.bytesWritten) bytes written in \(f.duration.milliseconds) ms "
                     + "(fragmented: \(f.sourceBytes) bytes)")
            return nil
        } catch {
            let line = "\(name) stays a fragmented MP4 (it plays, but some players show no duration): \(error.message)"
            log.warning(line)
            return line
        }
    }

    /// At start: the temporary files of finishes a kill or power cut interrupted go; their
    /// clips (whole, still fragmented) are returned to be finished again.
    static func removeLeftovers(in dcim: String) -> [String] {
        guard let dirs = try? FileManager.default.contentsOfDirectory(atPath: dcim) else { return [] }
        return dirs.sorted().flatMap { RegularMP4.removeLeftovers(in: PlainIO.path(dcim, $0)) }
    }
}
