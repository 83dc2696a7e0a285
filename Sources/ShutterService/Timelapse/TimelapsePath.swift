// SPDX-License-Identifier: BSD-2-Clause
import ShutterControl
import ShutterCore
import ShutterMedia

/// `shutterctl timelapse`: one film at a time, made by a `TimelapseJob` on a thread of its
/// own while the camera goes on (a tap, a clip, interval photos are taken meanwhile).
/// Loop-owned: the request waits for its film (its reply names it, or says why there is
/// none); its progress is `status.timelapse` and the `timelapse` live events, at most one a
/// percent. A second film while one is made is refused at once with the first's progress.
final class TimelapsePath {
    private struct Making {
        var reply: Reply
        var report: TimelapseReport
        var stop: TimelapseJob.Stop
        var percentTold = -1
    }

    private let ctx: ServiceContext
    private let jobs: Jobs
    private let log = Log("shutter.timelapse")
    private var making: Making?

    init(ctx: ServiceContext, jobs: Jobs) {
        self.ctx = ctx
        self.jobs = jobs
    }

    /// The film being made, for `status`.
    var report: TimelapseReport? { making?.report }

    /// The encoding as the clips': the board's encoder, its preset and bitrate.
    private func settings(_ order: TimelapseJob.Order, camera: CameraInfo?) -> TimelapseSettings {
        let c = ctx.config
        return TimelapseSettings(fps: order.fps, size: order.size, videoEncoder: c.video.encoder.rawValue, preset: c.video.preset,
                                 videoBitrate: c.video.bitrateKbps * 1000,
                                 labels: CameraLabels.clip(c, camera, cameraAppliesTransform: ctx.roles.cameraAppliesTransform),
                                 minFreeBytes: ctx.storage.minFreeBytes)
    }

    func make(_ order: TimelapseJob.Order, camera: CameraInfo?, reply: Reply) {
        if let m = making {
            var r = ControlReply.failure("busy: a time-lapse is being made (\(m.report.done) of \(m.report.of) photos"
                                         + (m.report.output.map { ", \(PlainIO.lastComponent($0))" } ?? "")
                                         + "): one at a time; `shutterctl timelapse cancel` stops it")
            r.busy = true
            r.timelapse = m.report
            return reply.send(r)
        }
        let stop = TimelapseJob.Stop()
        making = Making(reply: reply, report: TimelapseReport(state: "making", fps: order.fps), stop: stop)
        log.notice("time-lapse: a film of the photos \(order.range.text) at \(order.fps) fps")
        let job = TimelapseJob(order: order, settings: settings(order, camera: camera), storage: ctx.storage, stop: stop,
                               photoDone: ctx.hooks.timelapsePhoto)
        job.start(work: ctx.work, post: jobs.poster, answer: jobs.answerLater())
        publish()
    }

    /// The job's progress: the range once known, then each photo.
    func progress(_ p: TimelapseJob.Progress) {
        guard var m = making else { return }
        m.report.done = p.done
        m.report.of = p.of
        m.report.first = p.first
        m.report.last = p.last
        m.report.output = p.output
        let percent = p.of > 0 ? p.done * 100 / p.of : 100
        let tell = percent != m.percentTold
        if tell { m.percentTold = percent }
        making = m
        if tell { publish() }
        if p.done == 0 { log.notice("time-lapse: \(p.of) photos, \(p.first) to \(p.last), into \(p.output)") }
    }

    /// The film is made, or not: the request is answered, watchers told.
    func made(_ result: Result<TimelapseMaker.Summary, TimelapseError>) {
        guard var m = making else { return }
        making = nil
        switch result {
        case .success(let s):
            m.report.state = "done"
            m.report.output = s.path
            m.report.done = m.report.of
            m.report.frames = s.frames
            m.report.width = s.size.width
            m.report.height = s.size.height
            m.report.bytes = s.bytes
            m.report.skipped = s.skipped.isEmpty ? nil : s.skipped
            log.notice("time-lapse: \(s.path) made: \(s.frames) frames, \(s.size) at \(s.fps) fps, \(s.bytes) bytes"
                       + (s.skipped.isEmpty ? "" : "; left out: \(s.skipped.joined(separator: "; "))"))
            var r = ControlReply(ok: true, files: [s.path])
            r.timelapse = m.report
            m.reply.send(r)
        case .failure(let e):
            m.report.state = e.code == .cancelled ? "cancelled" : "failed"
            m.report.error = e.message
            log.warning("time-lapse: no film: \(e.message)")
            var r = ControlReply.failure("time-lapse: \(e.message)")
            r.timelapse = m.report
            m.reply.send(r)
        }
        making = m
        publish()
        making = nil
    }

    /// `timelapse cancel`, or shutterd stopping: the film stops before its next photo; its
    /// request is answered then. False when none is being made.
    @discardableResult
    func cancel(_ why: String) -> Bool {
        guard let m = making else { return false }
        log.notice("time-lapse: stopping it: \(why)")
        m.stop.ask()
        return true
    }

    private func publish() {
        guard let r = making?.report else { return }
        var data: JSONObject = ["state": .string(r.state), "done": .int(r.done), "of": .int(r.of),
                                "fps": .int(r.fps)]
        if let o = r.output { data["output"] = .string(o); data["name"] = .string(PlainIO.lastComponent(o)) }
        if let e = r.error { data["error"] = .string(e) }
        if let f = r.frames { data["frames"] = .int(f) }
        ctx.live.publish(LiveEvent(type: "timelapse", data: data))
    }
}
