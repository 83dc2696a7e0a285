// SPDX-License-Identifier: BSD-2-Clause
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

/// The hold path, top to bottom (the work itself is ClipRecorder's, off the loop):
///
/// 1. A press starts encoding at once from the frame exposed at the press (or,
///    with pre-roll, from the ring's keyframe nearest press − N) under a hidden
///    temporary name: `begin`.
/// 2. A tap throws it away: `discard` (the photo waits until it is gone).
/// 3. A hold gives it its DCF name: `commit` → `committed`.
/// 4. The release, a `record stop` or the max duration sets the one stop time:
///    `stop`. Frames after it are not recorded.
/// 5. Once a frame past the stop has arrived (or 250 ms passed) the clip is
///    finalised (`finishIfStopped` → `finished`): its files are reported.
final class ClipSession {
    /// The clip being encoded: speculative (no id) from a press, or a recording.
    struct Current {
        var id: CaptureID?
        /// The first frame's exposure start, once committed.
        var start: MonotonicTime?
        var path: String?
        /// The one stop time, shared with the recorder: frames after it are not recorded.
        let stop = ClipStop()
        var stopAt: MonotonicTime? { stop.at }
    }

    private let ctx: ServiceContext
    private let jobs: Jobs
    let recorder: ClipRecorder
    private(set) var current: Current?
    /// Clips get an audio track only while the microphone delivers.
    var micRunning = false
    /// The clip whose finish is under way (a job): its id and file name, until `finished`.
    private var finishing: (id: CaptureID, name: String?)?
    private(set) var clips = 0
    private var discards = 0

    init(ctx: ServiceContext, jobs: Jobs) {
        self.ctx = ctx
        self.jobs = jobs
        let c = ctx.config
        var settings = RecordingSettings(
            videoEncoder: c.video.encoder.rawValue, preset: c.video.preset, fps: c.video.fps,
            videoBitrate: c.video.bitrateKbps * 1000, audioChannels: c.audio.channels,
            audioSampleRate: c.audio.sampleRate, audioBitrate: c.audio.bitrateKbps * 1000,
            segmentSeconds: Double(c.video.segmentSeconds))
        settings.keyframeInterval = .milliseconds(Int64(c.video.keyframeIntervalMs))
        settings.overlay = ctx.overlay
        recorder = ClipRecorder(storage: ctx.storage, settings: settings, clock: ctx.clock,
                                prerollSeconds: c.video.prerollSeconds, wallClock: ctx.wallClock, live: ctx.video, work: ctx.work)
    }

    /// No clip is encoded, committed or being finalised.
    var isIdle: Bool { current == nil && finishing == nil }

    /// The file name of clip `id` (recording or finishing), for "busy: recording SHTR0004.MP4".
    func name(of id: CaptureID) -> String? {
        if let c = current, c.id == id { return c.path.map { PlainIO.lastComponent($0) } }
        if let f = finishing, f.id == id { return f.name }
        return nil
    }
    var recordingID: CaptureID? { current?.id }
    /// Frames go to the recorder while a clip is encoded, or always with pre-roll.
    var wantsFrames: Bool { current != nil || recorder.hasPreroll }

    /// 1. A press: encode from `from` (the kept frames reach back to it) under a temp name.
    /// `camera`: the camera recording, whose make and model the file names.
    func begin(from: MonotonicTime, kept: [Frame], camera: CameraInfo?) {
        if current?.id != nil { return }  // a recording is running
        let labels = CameraLabels.clip(ctx.config, camera, cameraAppliesTransform: ctx.roles.cameraAppliesTransform)
        let c = Current(id: nil)
        recorder.begin(from: from, kept: kept, withAudio: micRunning, labels: labels, stop: c.stop)
        current = c
    }

    /// 2. The press was not a hold: stop encoding and delete the temporary file.
    /// Returns the discard's number, back as `.clipDiscarded` once the file is gone (a
    /// tap's photo is reported after that); nil with nothing to drop.
    func discard() -> Int? {
        guard let c = current, c.id == nil else { return nil }
        current = nil
        discards += 1
        let n = discards, answer = jobs.answerLater()
        recorder.discard { answer(.clipDiscarded(n)) }
        return n
    }

    /// 3. A hold (or `record start`): the clip `id`, from `from`.
    func commit(id: CaptureID, from: MonotonicTime, kept: [Frame], camera: CameraInfo?) {
        if current == nil || current?.id != nil { begin(from: from, kept: kept, camera: camera) }
        current?.id = id
        let answer = jobs.answerLater()
        recorder.commit { answer(.clipCommitted(id, $0)) }
    }

    /// The commit came back: the machine's input when it failed (a started recording needs none).
    func committed(_ id: CaptureID, _ result: Result<(path: String, start: MonotonicTime), CaptureError>) -> CaptureInput? {
        switch result {
        case .success(let (path, start)):
            if current?.id == id {
                current?.path = path
                current?.start = start
            }
            ctx.log.notice("recording \(path) (from the press)")
            return nil
        case .failure(let e):
            ctx.log.warning("recording refused: \(e.message)")
            if current?.id == id { current = nil }
            let answer = jobs.answerLater()
            recorder.discard { answer(.nothing) }
            return .recordingFailed(id: id, e)
        }
    }

    /// 4. The stop time (the release, a stop request, the max, an encoder that stalled).
    func stop(_ id: CaptureID, at end: MonotonicTime) {
        guard current?.id == id, current?.stopAt == nil else { return }
        current?.stop.set(end)
    }

    /// Stopping the service: a recording ends now, a speculative clip is dropped.
    func stopForShutdown(now: MonotonicTime) {
        guard let c = current else { return }
        if let id = c.id {
            if c.stopAt == nil { stop(id, at: now) }
            finish()
        } else {
            _ = discard()
        }
    }

    /// A frame for the clip (or the pre-roll encoder).
    func offer(_ f: Frame) { recorder.offer(f) }

    /// 5. Once a frame past the stop time has arrived (or a moment passed), finalise.
    func finishIfStopped(now: MonotonicTime, lastFrame: MonotonicTime?) {
        guard let c = current, c.id != nil, let stop = c.stopAt else { return }
        if (lastFrame.map { $0 > stop } ?? false) || now >= stop + .milliseconds(250) { finish() }
    }

    /// When the loop must look again: a moment after the stop time.
    var nextDeadline: MonotonicTime? { current?.stopAt.map { $0 + .milliseconds(300) } }

    private func finish() {
        guard let c = current, let id = c.id else { return }
        current = nil
        finishing = (id, name(of: id) ?? c.path.map { PlainIO.lastComponent($0) })
        let answer = jobs.answerLater(), start = c.start
        recorder.finish { answer(.clipFinished(id, start: start, $0)) }
    }

    /// The clip is finalised: the machine's input, and what its requests are answered with.
    func finished(_ id: CaptureID, _ outcome: ClipRecorder.Outcome) -> (input: CaptureInput, files: Result<[String], CaptureError>, error: String?) {
        if finishing?.id == id { finishing = nil }
        let paths = outcome.paths, summary = outcome.summary
        if let e = summary.error {
            if !paths.isEmpty { clips += 1 }
            let code: CaptureError.Code = NoSpace.means(e.errno ?? 0) ? .storageFull : .encoder
            let error = CaptureError(code, "\(e.message) (kept: \(paths.joined(separator: ", ")))")
            return (.recordingFailed(id: id, error), paths.isEmpty ? .failure(error) : .success(paths), e.message)
        }
        clips += 1
        ctx.log.notice("clip saved: \(paths.joined(separator: ", ")) (\(summary.framesWritten) frames, \(summary.duration.milliseconds) ms)")
        return (.recordingFinalised(id: id, paths: paths), .success(paths), nil)
    }
}
