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
import ShutterStorage
import ShutterMedia
import Synchronization

/// The hold path's files: a press starts encoding at once, from the frame
/// exposed at the press, into a hidden temp file (`begin`); a hold gives it its
/// DCF name (`commit`); the release or the max ends it (its `ClipStop`, then `finish`);
/// a tap throws it away (`discard`).
///
/// With pre-roll (`video.prerollSeconds` > 0) one encoder runs all the time
/// (`PrerollEncoder`) and its packets go into a `PrerollRing`; a press's clip then
/// starts at the ring's keyframe nearest press − N and takes packets, not frames:
/// no encoder starts at the press, and a tap only ends the clip's file.
///
/// The service loop only enqueues: frame and audio copies run on this type's
/// serial queue, renames and fsyncs too, and finalising (which waits for the
/// encoder thread) on a queue of its own, so a clip being finalised never holds
/// up the next press's encoding. Whether the encoder takes a frame is decided on
/// the loop, before that queue (`Recorder.takes`): a frame it leaves out is let go
/// at once, its camera buffer back, as a pre-roll encoder's is.
///
/// Work in flight (`work`): every block on either queue counts from when it is queued
/// until it has run, and the encoders count the frames, packets and sound they hold
/// (RecordingQueue). All of it ends without the clock: finishing waits for the encoder
/// thread, and with pre-roll for the last packet at most 10 x 50 ms of real time.
final class ClipRecorder: Sendable {
    /// What the watchdog and `status` read.
    struct Progress: Sendable {
        /// When the encoder last took a frame of a committed clip.
        var lastAccepted: MonotonicTime?
    }

    struct Outcome: Sendable {
        var paths: [String]
        var summary: RecordingSummary
    }

    /// One clip: built on `queue`, then kept in `session` and changed there (on `queue`).
    private struct Session: Sendable {
        let files: ClipFiles
        let start: MonotonicTime
        /// When the first kept frame began exposing (the press, if none was kept): the clip's start as reported.
        let exposureStart: MonotonicTime
        var recorder: Recorder?
        var setupError: String?
        var committed = false
        /// The loop's stop time for this clip (its one owner is the loop's `ClipSession`).
        let stop: ClipStop
    }

    private let storage: Storage
    private let settings: RecordingSettings
    private let clock: any MonotonicClock
    private let log = Log("shutter.clip")
    private let queue = DispatchQueue(label: "shutter.clip")
    private let finishing = DispatchQueue(label: "shutter.clip.finish")
    private let work: InFlight?
    /// The clip being encoded: set, changed and cleared on `queue`; read there and by `isActive`.
    private let session = Mutex<Session?>(nil)
    private let progressState = Mutex(Progress())
    private let serial = Mutex(0)

    /// The pre-roll encoder and ring (nil when off). The ring is touched on `queue` only.
    private let preroll: PrerollEncoder?
    private let prerollSeconds: Int
    private let ring: Mutex<PrerollRing<EncodedPacket>>
    private let prerollState = Mutex<PrerollReport?>(nil)
    /// Capture time of the newest packet received (on `queue`).
    private let newestPacket = Mutex<MonotonicTime?>(nil)
    /// The clip's recorder, for `offer`'s decision on the loop (set and cleared on `queue`).
    private let pacing = Mutex<Recorder?>(nil)

    /// The wall time of a point on the service's clock: dates each clip file when trusted.
    private let wallTime: (@Sendable (MonotonicTime) -> WallTime)?

    /// `live`: the live viewers, who get the pre-roll encoder's packets too.
    init(storage: Storage, settings: RecordingSettings, clock: any MonotonicClock, prerollSeconds: Int = 0,
         wallClock: (any WallClock)? = nil, live: LiveVideo? = nil, work: InFlight? = nil) {
        self.storage = storage
        self.work = work
        if let wallClock {
            wallTime = { @Sendable t in wallClock.now().adding(t - clock.now()) }
        } else {
            wallTime = nil
        }
        self.settings = settings
        self.clock = clock
        self.prerollSeconds = prerollSeconds
        let retain = PrerollBound.retain(seconds: prerollSeconds)
        ring = Mutex(PrerollRing(retain: retain, byteLimit: PrerollBound.bytes(settings: settings, retain: retain)))
        if prerollSeconds > 0 {
            let box = WeakBox()
            preroll = PrerollEncoder(settings: settings, work: work) { p in
                box.recorder?.received(p)
                live?.received(p)
            }
            box.recorder = self
            prerollState.withLock {
                $0 = PrerollReport(seconds: prerollSeconds, heldSeconds: 0, bytes: 0,
                                   boundBytes: ring.withLock { $0.byteLimit }, capEvictions: 0, error: nil)
            }
        } else {
            preroll = nil
        }
    }

    var hasPreroll: Bool { preroll != nil }

    /// The ring as `status` reports it; nil when pre-roll is off.
    var prerollReport: PrerollReport? {
        guard var r = prerollState.withLock({ $0 }) else { return nil }
        r.error = preroll?.error
        return r
    }

    /// The recorder as the pre-roll encoder's packet handler sees it: weakly (the recorder
    /// holds the encoder), set once `init` has made the encoder.
    private final class WeakBox: Sendable {
        private struct Weak { weak var recorder: ClipRecorder? }
        private let held = Mutex(Weak())
        var recorder: ClipRecorder? {
            get { held.withLock { $0.recorder } }
            set { held.withLock { $0.recorder = newValue } }
        }
    }

    /// A packet of the pre-roll encoder (its thread): into the ring and the clip, on `queue`.
    private func received(_ p: EncodedPacket) {
        onQueue { [self] in
            newestPacket.withLock { $0 = p.time }
            let report = ring.withLock { ring -> PrerollReport in
                if let last = ring.video.last, last.source !== p.source { ring.removeAll() }  // a new encoder
                ring.push(p)
                return PrerollReport(seconds: prerollSeconds, heldSeconds: ring.heldSeconds, bytes: ring.bytes,
                                     boundBytes: ring.byteLimit, capEvictions: ring.capEvictions, error: nil)
            }
            prerollState.withLock { $0 = report }
            guard let s = session.withLock({ $0 }), let r = s.recorder else { return }
            if let stop = s.stop.at, p.time > stop { return }
            if r.append(packet: p), s.committed { progressState.withLock { $0.lastAccepted = clock.now() } }
        }
    }

    var progress: Progress { progressState.withLock { $0 } }

    /// A press: encode from `from` (the kept frames reach back to it) under a temp name.
    /// Replaces an uncommitted clip; never a committed one.
    /// `stop`: the clip's stop time, set by the loop; nothing after it is recorded.
    func begin(from: MonotonicTime, kept: [Frame], withAudio: Bool, labels: ClipLabels = ClipLabels(),
               stop: ClipStop) {
        let n = serial.withLock { $0 += 1; return $0 }
        var clipSettings = self.settings
        clipSettings.labels = labels
        if !withAudio { clipSettings.audioChannels = 0 }  // no microphone: video only, no empty track
        let settings = clipSettings, storage = self.storage, log = self.log
        onQueue { [self] in
            if let old = session.withLock({ $0 }), old.committed { return }
            if let old = detach() { finalise(old, discard: true) { _ in } }
            if let preroll {
                return beginFromRing(from: from, serial: n, settings: settings, encoder: preroll, stop: stop)
            }
            let files = ClipFiles(storage: storage, serial: n)
            let start = kept.first.map { min($0.timestamp, from) } ?? from
            var s = Session(files: files, start: start, exposureStart: kept.first?.exposureStart ?? from, stop: stop)
            do {
                let r = try Recorder(settings: settings, start: start, files: { try files.open($0) },
                                     wallTime: wallTime, work: work, cardSync: storage.cardSync)
                for f in kept { r.append(f) }
                s.recorder = r
                pacing.withLock { $0 = r }
            } catch {
                s.setupError = "\(error)"
                log.error("cannot record: \(error)")
            }
            session.withLock { $0 = s }
            progressState.withLock { $0 = Progress() }
        }
    }

    /// On `queue`: a clip from the ring's keyframe nearest press − N, then the live packets.
    private func beginFromRing(from: MonotonicTime, serial: Int, settings: RecordingSettings,
                               encoder: PrerollEncoder, stop: ClipStop) {
        let files = ClipFiles(storage: storage, serial: serial)
        let target = from - .seconds(prerollSeconds)
        let held = ring.withLock { $0.clip(from: target) }
        let first = held?.video.first
        var s = Session(files: files, start: first?.time ?? from, exposureStart: first?.exposureStart ?? from, stop: stop)
        do {
            let r = try Recorder(settings: settings, start: s.start, files: { try files.open($0) },
                                 wallTime: wallTime, work: work, cardSync: storage.cardSync)
            if settings.audioChannels > 0 { for a in held?.audio ?? [] { r.append(prerollAudio: a) } }
            for p in held?.video ?? [] { r.append(packet: p) }
            s.recorder = r
        } catch {
            s.setupError = "\(error)"
            log.error("cannot record: \(error)")
        }
        encoder.clipOpen = true  // keyframes at the normal interval while the clip is written
        session.withLock { $0 = s }
        progressState.withLock { $0 = Progress() }
    }

    func offer(_ frame: Frame) {
        if let preroll {
            preroll.append(frame)
            return
        }
        let now = clock.now()
        // Left out at the encoder's pace: not carried to the queue (nor copied).
        let decided = pacing.withLock { $0 }
        if let decided, !decided.takes(frame) { return }
        onQueue { [self] in
            guard let s = session.withLock({ $0 }), let r = s.recorder else { return }
            func append() -> Bool { r === decided ? r.append(taken: frame) : r.append(frame) }
            if let stop = s.stop.at {
                if frame.timestamp <= stop { _ = append() }
            } else if append(), s.committed {
                progressState.withLock { $0.lastAccepted = now }
            }
        }
    }

    func offer(_ audio: AudioChunk) {
        onQueue { [self] in
            if preroll != nil { ring.withLock { $0.push(audio) } }
            guard let s = session.withLock({ $0 }), let r = s.recorder else { return }
            if let stop = s.stop.at, audio.timestamp > stop { return }
            r.append(audio)
        }
    }

    // `commit`, `finish` and `discard` are enqueued at the call, in the order the
    // loop decides them (a later press's `begin` must come after this clip's
    // `finish`); each calls `done` once, later, from the recorder's queues.

    /// The press became a hold: reserve the DCF name and move the temp file onto it.
    /// Gives the first file's path and where the clip starts (its first frame's exposure start).
    func commit(_ done: @escaping @Sendable (Result<(path: String, start: MonotonicTime), CaptureError>) -> Void) {
        let storage = self.storage
        onQueue { [self] in
            guard let s = session.withLock({ $0 }) else {
                return done(.failure(CaptureError(.encoder, "no clip was being encoded")))
            }
            // The encoder could not start, or stopped on an error before the press became a hold.
            if let e = s.setupError ?? s.recorder?.error.map({ "\($0)" }) {
                return done(.failure(CaptureError(.encoder, e)))
            }
            do {
                _ = try storage.ensureSpace(for: .video)
                let path = try s.files.commit()
                session.withLock { $0?.committed = true }
                progressState.withLock { $0.lastAccepted = clock.now() }
                done(.success((path, s.exposureStart)))
            } catch let e as StorageError {
                done(.failure(CaptureError(e)))
            } catch {
                done(.failure(CaptureError(.storageError, "\(error)")))
            }
        }
    }

    /// Finalises the clip (flush, sync): its files with their final names.
    func finish(_ done: @escaping @Sendable (Outcome) -> Void) {
        onQueue { [self] in finishWhenCaughtUp(done, tries: 0) }
    }

    /// With pre-roll the packets trail the frames by the encoder's queue: wait (briefly)
    /// for the packet of the last frame before the stop, so the clip ends at the release.
    private func finishWhenCaughtUp(_ done: @escaping @Sendable (Outcome) -> Void, tries: Int) {
        if preroll != nil, tries < 10, let s = session.withLock({ $0 }), let stop = s.stop.at,
           (newestPacket.withLock { $0 }.map { $0 < stop } ?? false) {
            work?.begin()
            queue.asyncAfter(deadline: .now() + .milliseconds(50)) { [self] in
                finishWhenCaughtUp(done, tries: tries + 1)
                work?.end()
            }
            return
        }
        guard let s = detach() else { return done(Outcome(paths: [], summary: RecordingSummary())) }
        finalise(s, discard: false, done)
    }

    /// The press was a tap (or the clip could not be committed): stop encoding
    /// and delete what was written. A committed clip is left alone.
    func discard(_ done: @escaping @Sendable () -> Void) {
        onQueue { [self] in
            guard let s = session.withLock({ $0 }), !s.committed, let detached = detach() else { return done() }
            finalise(detached, discard: true) { _ in done() }
        }
    }

    /// `body` on `queue`, counted as work in flight until it has run.
    private func onQueue(_ body: @escaping @Sendable () -> Void) {
        work?.begin()
        queue.async { [work] in
            body()
            work?.end()
        }
    }

    /// Whether a clip (committed or not) is being encoded.
    var isActive: Bool { session.withLock { $0 != nil } }

    // On `queue`.
    private func detach() -> Session? {
        preroll?.clipOpen = false  // back to the short keyframe interval for the ring
        pacing.withLock { $0 = nil }
        return session.withLock { s in defer { s = nil }; return s }
    }

    private func finalise(_ s: Session, discard: Bool, _ done: @escaping @Sendable (Outcome) -> Void) {
        work?.begin()
        finishing.async { [work] in
            defer { work?.end() }
            let summary = s.recorder?.finish() ?? RecordingSummary()
            releaseFreedMemory()
            if discard {
                s.files.discard()
                done(Outcome(paths: [], summary: summary))
                return
            }
            s.files.finish()
            let paths = s.files.finalNames(summary.paths).filter { FileManager.default.fileExists(atPath: $0) }
            done(Outcome(paths: paths, summary: summary))
        }
    }
}
