// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ShutterControl
import ShutterCore
import ShutterStorage
import Synchronization

/// Uploads as a part: in the connector (shutterd-connector.service, which may reach the
/// network; shutterd may not), or in shutterd itself when it runs without one (`make run`).
/// It follows the camera's live events (a new file wakes it; `upload-command` carries
/// `shutterctl upload pause|resume|retry`), runs the uploader's cycles on a queue of its own,
/// and reports the queue and what happened to shutterd (`status.upload`, the live events
/// "uploaded" and "upload-failed").
final class UploadPart: ServicePart {
    /// The live event by which shutterd passes `shutterctl upload pause|resume|retry` on.
    static let commandEvent = "upload-command"

    private struct Running: Sendable {
        let uploader: Uploader
        let link: any CameraLink
        let watch: Int
        let scratch: String
    }

    private let config: ShutterConfig
    private let running = Mutex<Running?>(nil)
    /// The last report sent, and when (a report goes when it changed, with events, and at
    /// least every 30 s: one shutterd did not get, restarting, is sent again).
    private let sent = Mutex<(report: UploadReport?, at: UInt64)>((nil, 0))
    private let timer = Mutex<(any DispatchSourceTimer)?>(nil)
    private let wake = Wakeup()
    private let queue = DispatchQueue(label: "shutter.upload")
    private let log = Log("shutter.upload")

    init(config: ShutterConfig) { self.config = config }

    var name: String { "uploads" }

    func start(_ service: CameraService) -> PartStart {
        start(link: ServiceLink(service: service), storage: service.storage)
    }

    func start(link: any CameraLink, storage: Storage) -> PartStart {
        guard config.upload.enabled else { return .off }
        var setup: UploadSetup
        switch UploadSetup.check(config.upload) {
        case .failure(let problem):
            log.error("uploads not started: \(problem)")
            link.report(part: "uploads", trouble: problem.description)
            return .failed(problem.description)
        case .success(let s): setup = s
        }
        var template = Array("/tmp/shutter-upload-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            return .failed("cannot make a folder in /tmp for rclone: \(String(cString: strerror(errno)))")
        }
        let scratch = String(cString: made)
        switch setup.withConfigCopy(in: scratch) {
        case .failure(let problem):
            rmdir(scratch)
            return .failed(problem.description)
        case .success(let s): setup = s
        }
        let rclone = Rclone(setup: setup, bandwidth: config.upload.bandwidth, scratch: scratch)
        let settings = Uploader.Settings(what: config.upload.what, layout: config.upload.layout,
                                         alertSeconds: Double(config.upload.alertMinutes) * 60)
        let uploader = Uploader(setup: setup, rclone: rclone, storage: storage, settings: settings,
                                wallClock: SystemWallClock(), changed: { [weak self] in self?.publish() })
        let wake = self.wake
        let watch = link.watch { event in
            switch event.type {
            case "file": wake.notify()
            case Self.commandEvent:
                // Not here: this runs under the events' lock, and pausing waits for rclone to end.
                let action = event.data["action"]
                DispatchQueue.global().async {
                    switch action {
                    case .string("pause")?: uploader.pause()
                    case .string("resume")?: uploader.resume()
                    case .string("retry")?: uploader.retry()
                    default: break
                    }
                    wake.notify()
                }
            default: break
            }
        }
        // A file that appeared without an event (a restart in between) and a failed file's next try.
        timer.withLock { $0 = Self.ticks(wake) }
        running.withLock { $0 = Running(uploader: uploader, link: link, watch: watch, scratch: scratch) }
        log.notice("uploads to \(config.upload.remote) (rclone, \(config.upload.rcloneConfig)); the queue's records in "
                   + UploadRecords.directory(root: storage.root))
        wake.notify()
        return .running
    }

    func run(_ service: CameraService) async { await run() }

    /// Runs cycles while there is work, then waits for a wake, until cancelled.
    func run() async {
        guard let r = running.withLock({ $0 }) else { return }
        while !Task.isCancelled {
            let uploader = r.uploader
            let more = await Blocking.run(on: queue) { uploader.cycle() }
            publish()
            if !more { await wake.wait() }
        }
    }

    /// Tells shutterd the queue and what happened, when either changed (from the run loop,
    /// and from the uploads' queue as a batch goes).
    private func publish() {
        guard let r = running.withLock({ $0 }) else { return }
        let report = r.uploader.report()
        let events = r.uploader.takeHappenings().map(Self.event)
        let now = DispatchTime.now().uptimeNanoseconds
        let due = sent.withLock { last -> Bool in
            let due = last.report != report || now - last.at >= 30_000_000_000
            if due || !events.isEmpty { last = (report, now) }
            return due
        }
        if due || !events.isEmpty { r.link.report(upload: report, events: events) }
    }

    func stop() {
        timer.withLock { $0?.cancel(); $0 = nil }
        guard let r = running.withLock({ s in defer { s = nil }; return s }) else { return }
        r.link.stopWatching(r.watch)
        r.uploader.shutdown()  // ends a copy under way; its files are sent again at the next start
        unlink(PlainIO.path(r.scratch, "rclone.conf"))
        rmdir(r.scratch)
    }

    /// Wakes the run loop every 5 s.
    private static func ticks(_ wake: Wakeup) -> any DispatchSourceTimer {
        let t = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "shutter.upload.timer"))
        t.schedule(deadline: .now() + .seconds(5), repeating: .seconds(5))
        t.setEventHandler { wake.notify() }
        t.resume()
        return t
    }

    static func event(_ h: Uploader.Happening) -> LiveEvent {
        switch h {
        case let .uploaded(file, remote, bytes, check):
            return LiveEvent(type: "uploaded", data: ["file": .string(file), "remote": .string(remote),
                                                      "bytes": .int(Int(bytes)), "check": .string(check)])
        case let .failed(file, reason, attempts):
            return LiveEvent(type: "upload-failed", data: ["file": .string(file), "reason": .string(reason),
                                                           "attempts": .int(attempts)])
        }
    }
}
