// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import CShutterSys
import ShutterCore
import ShutterMedia
import ShutterStorage
import Synchronization

/// A time-lapse film's work, off the loop on a thread of its own at the lowest CPU and I/O
/// priority (nice 19, the idle I/O class: the encoder's threads inherit both), so a photo
/// or a clip never waits for it: the card's photos listed, the range's chosen, the film made
/// (`TimelapseMaker`). It tells the loop its progress after each photo (`.timelapse`) and
/// ends with `.done(.timelapseMade)`; the loop may ask it to stop (`Stop`), which it sees
/// before the next photo.
struct TimelapseJob: Sendable {
    /// What `shutterctl timelapse` asked for.
    struct Order: Sendable, Equatable {
        var range: TimelapseRange
        var fps: Int
        var size: PixelSize?
        /// The film's file name in DCIM/; nil: `timelapse-<first>-<last>.MP4`.
        var output: String?
    }

    /// After the range is known (`done` 0) and after each photo.
    struct Progress: Sendable, Equatable {
        var done: Int
        var of: Int
        var first: Int
        var last: Int
        var output: String
    }

    /// The loop's word to stop (shutterd stopping, `timelapse cancel`): one flag two threads share.
    final class Stop: Sendable {
        private let flag = Atomic(false)
        func ask() { flag.store(true, ordering: .sequentiallyConsistent) }
        var asked: Bool { flag.load(ordering: .sequentiallyConsistent) }
    }

    let order: Order
    let settings: TimelapseSettings
    let storage: Storage
    let stop: Stop
    /// Told after each photo, on the film's thread (ServiceHooks.timelapsePhoto).
    let photoDone: @Sendable (_ done: Int, _ work: InFlight) -> Void

    /// Starts the thread; counted as work in flight until it has answered.
    func start(work: InFlight, post: @escaping @Sendable (ServiceEvent) -> Void,
               answer: @escaping @Sendable (JobResult) -> Void) {
        work.begin()
        PlainThread.start(name: "timelapse") { [self] in
            Self.lowerPriority()
            answer(.timelapseMade(run(work: work, post: post)))
            work.end()
        }
    }

    /// This thread at nice 19 and the idle I/O class, and the log says what it got (a unit
    /// whose filter refuses setpriority or ioprio_set leaves it where it was: said, not fatal).
    private static func lowerPriority() {
        let log = Log("shutter.timelapse")
        let lowered = shutter_lower_this_thread() == 0
        let why = lowered ? "" : " (\(SystemError(errno: errno, call: "setpriority/ioprio_set")))"
        var nice: Int32 = 0, io: Int32 = 0
        guard shutter_this_thread_priority(&nice, &io) == 0 else { return }
        let word = [0: "none", 1: "realtime", 2: "best-effort", 3: "idle"][Int(io)] ?? String(io)
        let line = "time-lapse: its thread runs at nice \(nice), I/O class \(word)\(why)"
        if lowered { log.info(line) } else { log.warning(line) }
    }

    /// The default film name: the range's first and last photo by number.
    static func defaultName(first: Int, last: Int) -> String { "timelapse-\(first)-\(last).MP4" }

    private func run(work: InFlight, post: @escaping @Sendable (ServiceEvent) -> Void) -> Result<TimelapseMaker.Summary, TimelapseError> {
        do throws(TimelapseError) {
            do { try storage.checkHealth() } catch {
                throw TimelapseError(.ioError, error.message)
            }
            let photos = order.range.photos(storage.finishedMedia())
            guard let first = photos.first, let last = photos.last else {
                throw TimelapseError(.noPhotos, "no photos \(order.range.text) (`shutterctl files` lists the card's photos "
                                     + "with their numbers and times)")
            }
            let output = PlainIO.path(storage.dcim, order.output
                                      ?? Self.defaultName(first: first.number.webNumber, last: last.number.webNumber))
            TimelapseMaker.removeLeftovers(in: storage.dcim)
            let of = photos.count
            func progress(_ done: Int) {
                post(.timelapse(Progress(done: done, of: of, first: first.number.webNumber,
                                         last: last.number.webNumber, output: output)))
            }
            progress(0)
            let list = photos.map {
                let name = $0.number.directoryName + "/" + $0.fileName
                return TimelapseMaker.Photo(path: PlainIO.path(storage.dcim, name), name: name)
            }
            let hook = photoDone
            return .success(try TimelapseMaker.make(list, to: output, settings: settings, sync: storage.cardSync,
                                                    stop: { stop.asked }) { done, _ in
                progress(done)
                hook(done, work)
            })
        } catch {
            return .failure(error)
        }
    }
}
