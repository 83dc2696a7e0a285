// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShutterCore
import ShutterMedia
import Synchronization

/// The benchmarks. Nothing here is main-actor isolated: threads call into it.
enum RecordingBench {
    static let width = 1920, height = 1080, fps = 30

    static func main(_ arguments: [String]) {
        var options: [String: String] = [:]
        var i = 0
        while i + 1 < arguments.count {
            options[String(arguments[i].dropFirst(2))] = arguments[i + 1]
            i += 2
        }
        var settings = RecordingSettings()
        settings.preset = options["preset"] ?? "veryfast"
        let only = options["only"]
        let dir = NSTemporaryDirectory() + "bench-recording-\(getpid())"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let video = SyntheticVideo(width: width, height: height)
        if only == nil || only == "fast" {
            fast(seconds: Double(options["seconds"] ?? "60") ?? 60, trials: Int(options["trials"] ?? "2") ?? 2, settings: settings, video: video, dir: dir)
        }
        if only == nil || only == "preroll" {
            preroll(seconds: Double(options["preroll-seconds"] ?? options["realtime-seconds"] ?? "600") ?? 600,
                    settings: settings, video: video)
        }
        if only == nil || only == "realtime" {
            realtime(seconds: Double(options["realtime-seconds"] ?? "600") ?? 600, settings: settings,
                     video: video, dir: dir)
        }
    }

    static func emit(_ bench: String, _ value: Double, _ unit: String, reference: Double?, extra: String = "") {
        let ref = reference.map { String(format: "%.3f", $0) } ?? "null"
        let ratio = reference.flatMap { $0 > 0 ? String(format: "%.3f", value / $0) : nil } ?? "null"
        say("{\"bench\":\"\(bench)\",\"value\":\(String(format: "%.3f", value)),\"unit\":\"\(unit)\",\"reference\":\(ref),\"ratio\":\(ratio)\(extra)}")
    }

    /// One unbuffered write(2) per line, so lines appear as they are measured.
    static func say(_ line: String) {
        var bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeMutableBytes { write(1, $0.baseAddress, $0.count) }
    }

    static func now() -> MonotonicTime { SystemClock().now() }

    // MARK: as fast as it goes

    /// Ours and the reference alternate `trials` times; the best of each is compared (the
    /// machine is shared, so the minimum is the least disturbed run). All runs are printed.
    static func fast(seconds: Double, trials: Int, settings: RecordingSettings, video: SyntheticVideo, dir: String) {
        var oursRuns: [Double] = [], refRuns: [Double] = []
        var last: (summary: RecordingSummary, peak: Int, base: Int, refPeak: Int, status: Int32, sizes: [Int])?
        for _ in 0..<trials {
            guard let o = ours(seconds: seconds, settings: settings, video: video, dir: dir),
                  let r = reference(seconds: seconds, settings: settings, video: video, dir: dir) else { return }
            oursRuns.append(o.seconds)
            refRuns.append(r.seconds)
            let sizes = ["ours", "reference"].map {
                ((try? FileManager.default.attributesOfItem(atPath: "\(dir)/\($0).mp4")[.size]) as? Int) ?? 0
            }
            last = (o.summary, o.peak, o.base, r.peak, r.status, sizes)
        }
        guard let last, let best = oursRuns.min(), let bestRef = refRuns.min() else { return }
        let runs = ",\"runs\":[\(oursRuns.map { String(format: "%.2f", $0) }.joined(separator: ","))],\"reference_runs\":[\(refRuns.map { String(format: "%.2f", $0) }.joined(separator: ","))]"
        emit("recording_1080p30_60s", best, "s", reference: bestRef,
             extra: ",\"frames\":\(last.summary.framesWritten),\"dropped\":\(last.summary.framesDropped),\"preset\":\"\(settings.preset)\",\"bytes\":\(last.sizes[0]),\"reference_bytes\":\(last.sizes[1]),\"ffmpeg_status\":\(last.status)\(runs)")
        emit("recording_1080p30_60s_peak_rss", Double(last.peak) / 1_048_576, "MB", reference: Double(last.refPeak) / 1_048_576,
             extra: ",\"recording_path_mb\":\(String(format: "%.1f", Double(last.peak - last.base) / 1_048_576)),\"baseline_mb\":\(String(format: "%.1f", Double(last.base) / 1_048_576))")
        finish(clip: "\(dir)/ours.mp4", dir: dir, trials: trials)
        try? FileManager.default.removeItem(atPath: "\(dir)/ours.mp4")
        try? FileManager.default.removeItem(atPath: "\(dir)/reference.mp4")
    }

    /// The finish of the 60 s clip (fragmented → regular MP4, RegularMP4) against
    /// `ffmpeg -c copy` of the same file to a regular MP4, best of `trials` each; the bytes
    /// it writes as a ratio of the clip's size. Each trial finishes a fresh copy.
    static func finish(clip: String, dir: String, trials: Int) {
        var ours: [Double] = [], refs: [Double] = []
        var written: Int64 = 0, source: Int64 = 0
        for _ in 0..<max(1, trials) {
            let copy = "\(dir)/finish.mp4", out = "\(dir)/finish-ffmpeg.mp4"
            try? FileManager.default.removeItem(atPath: copy)
            guard (try? FileManager.default.copyItem(atPath: clip, toPath: copy)) != nil else { return }
            let t0 = now()
            do {
                guard let f = try RegularMP4.finish(path: copy) else { return say("{\"bench\":\"finish_1080p30_60s\",\"error\":\"not fragmented\"}") }
                written = f.bytesWritten
                source = f.sourceBytes
            } catch {
                return say("{\"bench\":\"finish_1080p30_60s\",\"error\":\"\(error)\"}")
            }
            ours.append(Double((now() - t0).nanoseconds) / 1e9)
            let r0 = now()
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
            p.arguments = ["-v", "error", "-y", "-i", clip, "-map", "0", "-c", "copy", out]
            guard (try? p.run()) != nil else { return }
            p.waitUntilExit()
            // The same durability as ours: the copy is synced before it counts as done.
            let fd = open(out, O_RDONLY)
            if fd >= 0 { fsync(fd); close(fd) }
            refs.append(Double((now() - r0).nanoseconds) / 1e9)
            try? FileManager.default.removeItem(atPath: copy)
            try? FileManager.default.removeItem(atPath: out)
        }
        guard let best = ours.min(), let bestRef = refs.min() else { return }
        emit("finish_1080p30_60s", best, "s", reference: bestRef,
             extra: ",\"bytes_written\":\(written),\"clip_bytes\":\(source),\"bytes_ratio\":\(String(format: "%.3f", Double(written) / Double(max(1, source)))),\"runs\":[\(ours.map { String(format: "%.3f", $0) }.joined(separator: ","))],\"reference_runs\":[\(refs.map { String(format: "%.3f", $0) }.joined(separator: ","))]")
    }

    static func ours(seconds: Double, settings: RecordingSettings, video: SyntheticVideo, dir: String)
        -> (seconds: Double, summary: RecordingSummary, peak: Int, base: Int)? {
        let frames = Int(seconds * Double(fps))
        let audio = SyntheticAudio(channels: 1)
        let chunkNs = Int64(audio.chunkFrames) * 1_000_000_000 / 48_000
        let base = ProcessMemory.resident
        ProcessMemory.resetPeak()
        let start = MonotonicTime(nanoseconds: 1_000_000_000)
        let t0 = now()
        let recorder: Recorder
        do {
            recorder = try Recorder(settings: settings, start: start, nextPath: { "\(dir)/ours.mp4" })
        } catch {
            say("{\"bench\":\"recording_1080p30_60s\",\"error\":\"\(error)\"}")
            return nil
        }
        var chunk = 0
        for i in 0..<frames {
            let t = start + .nanoseconds(Int64(i) * 1_000_000_000 / Int64(fps))
            while start + .nanoseconds(Int64(chunk) * chunkNs) <= t {
                recorder.append(audio.chunk(index: chunk, start: start))
                chunk += 1
            }
            recorder.appendWaiting(video.frame(index: i, timestamp: t))
        }
        while Int64(chunk) * chunkNs < Int64(seconds * 1e9) {
            recorder.append(audio.chunk(index: chunk, start: start))
            chunk += 1
        }
        let summary = recorder.finish()
        let ours = (now() - t0).nanoseconds
        let peak = ProcessMemory.peak
        if let e = summary.error { say("{\"bench\":\"recording_1080p30_60s\",\"error\":\"\(e)\"}") }
        return (Double(ours) / 1e9, summary, peak, base)
    }

    static func reference(seconds: Double, settings: RecordingSettings, video: SyntheticVideo, dir: String)
        -> (seconds: Double, peak: Int, status: Int32)? {
        let frames = Int(seconds * Double(fps))

        // The reference: the ffmpeg CLI on the same frames (packed, through a pipe), same settings.
        let argv = ["ffmpeg", "-nostdin", "-v", "error", "-y",
                    "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "\(width)x\(height)", "-r", "\(fps)", "-i", "pipe:0",
                    "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=\(seconds)",
                    "-c:v", settings.videoEncoder, "-preset", settings.preset, "-tune", "zerolatency", "-crf", "\(settings.crf)",
                    "-g", "\(fps)", "-keyint_min", "\(fps)", "-bf", "0", "-forced-idr", "1",
                    "-c:a", "aac", "-b:a", "\(settings.audioBitrate)", "-ac", "1",
                    "-movflags", "frag_keyframe+empty_moov+default_base_moof", "-flush_packets", "1",
                    "\(dir)/reference.mp4"]
        let frameBytes = Frame.i420ByteCount(width: width, height: height)
        let packed = UnsafeMutablePointer<UInt8>.allocate(capacity: frameBytes)
        defer { packed.deallocate() }
        let r0 = now()
        guard let child = try? ChildProcess.spawn(argv) else {
            say("{\"bench\":\"recording_1080p30_60s\",\"error\":\"cannot run ffmpeg\"}")
            return nil
        }
        signal(SIGPIPE, SIG_IGN)
        writing: for i in 0..<frames {
            video.writePacked(index: i, into: packed)
            var off = 0
            while off < frameBytes {
                let n = write(child.stdin, packed + off, frameBytes - off)
                if n < 0 { if errno == EINTR { continue }; break writing }
                off += n
            }
        }
        close(child.stdin)
        let (status, refPeak) = child.wait()
        let reference = (now() - r0).nanoseconds
        return (Double(reference) / 1e9, refPeak, status)
    }

    // MARK: real time

    static func sleepUntil(_ t: MonotonicTime) {
        var ts = timespec(tv_sec: Int(t.nanoseconds / 1_000_000_000), tv_nsec: Int(t.nanoseconds % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }

    static func realtime(seconds: Double, settings: RecordingSettings, video: SyntheticVideo, dir: String) {
        let audio = SyntheticAudio(channels: 1)
        let start = now() + .milliseconds(100)
        let recorder: Recorder
        do {
            recorder = try Recorder(settings: settings, start: start, nextPath: { "\(dir)/realtime.mp4" })
        } catch {
            say("{\"bench\":\"realtime_1080p30\",\"error\":\"\(error)\"}")
            return
        }
        let stop = Atomic<Bool>(false)
        let audioThread = Thread {
            let chunkNs = Int64(audio.chunkFrames) * 1_000_000_000 / 48_000
            var i = 0
            while !stop.load(ordering: .acquiring) {
                sleepUntil(start + .nanoseconds(Int64(i + 1) * chunkNs))
                recorder.append(audio.chunk(index: i, start: start))
                i += 1
            }
        }
        audioThread.start()
        let frames = Int(seconds * Double(fps))
        var rssAtMinute1 = 0
        var rssMax = 0
        var late = 0
        // Durable lag, sampled at every frame: how far the newest captured frame is ahead of
        // the point the recorder last reported on the storage (the clip start before the
        // first report), i.e. what a power cut at that moment would lose.
        var lags: [Int64] = []
        lags.reserveCapacity(frames)
        for i in 0..<frames {
            let t = start + .nanoseconds(Int64(i) * 1_000_000_000 / Int64(fps))
            sleepUntil(t)
            if now() - t > .milliseconds(33) { late += 1 }
            recorder.append(video.frame(index: i, timestamp: t))
            lags.append((t - (recorder.durable?.capturedBefore ?? start)).nanoseconds)
            if i % fps == 0 {
                let rss = ProcessMemory.resident
                if i == 60 * fps { rssAtMinute1 = rss }
                if i >= 60 * fps { rssMax = max(rssMax, rss) }
            }
        }
        let rssEnd = ProcessMemory.resident
        stop.store(true, ordering: .releasing)
        let summary = recorder.finish()
        let minutes = String(format: "%.1f", seconds / 60)
        let extra = ",\"seconds\":\(Int(seconds)),\"frames\":\(summary.framesWritten),\"late_producer_frames\":\(late),\"audio_overrun_frames\":\(summary.audioOverrunFrames),\"audio_dropped_frames\":\(summary.audioFramesDropped),\"preset\":\"\(settings.preset)\"\(summary.error.map { ",\"error\":\"\($0.code)\"" } ?? "")"
        emit("realtime_1080p30_dropped_frames", Double(summary.framesDropped), "frames", reference: 0, extra: extra)
        // The product's bound: a power cut loses at most the open fragment (one keyframe
        // interval) plus the encoder's latency; the reference is one fragment.
        lags.sort()
        if let maxLag = lags.last {
            let fragment = Double(settings.keyframeInterval.nanoseconds) / 1e9
            let median = Double(lags[lags.count / 2]) / 1e9
            // Only a figure of the product when the encoder kept up (no dropped frames): a
            // backlog adds to the lag (what the HIL power-cut scenario sees under emulation).
            let lagExtra = ",\"fragment_s\":\(String(format: "%.3f", fragment)),\"samples\":\(lags.count),\"dropped_frames\":\(summary.framesDropped),\"preset\":\"\(settings.preset)\""
            emit("realtime_1080p30_durable_lag_max", Double(maxLag) / 1e9, "s", reference: fragment, extra: lagExtra)
            emit("realtime_1080p30_durable_lag_median", median, "s", reference: fragment, extra: lagExtra)
        }
        if rssAtMinute1 > 0 {
            let growth = Double(max(rssEnd, rssMax) - rssAtMinute1) / 1_048_576
            emit("realtime_1080p30_rss_growth_min1_to_end", growth, "MB", reference: 5,
                 extra: ",\"rss_min1_mb\":\(String(format: "%.1f", Double(rssAtMinute1) / 1_048_576)),\"rss_end_mb\":\(String(format: "%.1f", Double(rssEnd) / 1_048_576)),\"minutes\":\(minutes)")
        }
    }

    // MARK: pre-roll

    /// CPU time of this process (user + system), in seconds.
    static func cpuSeconds() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6
            + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
    }

    /// Idle with `video.prerollSeconds` 3 at 1080p30, paced at real time, against the same
    /// frames and sound with pre-roll off (frames made and dropped, as the idle service
    /// does): CPU (% of one core) and resident memory, and the ring against its bound over
    /// the whole run (`seconds`, default 10 minutes; the off phase is at most 60 s).
    static func preroll(seconds: Double, settings base: RecordingSettings, video: SyntheticVideo) {
        var settings = base
        settings.videoBitrate = 10_000_000  // the service's default (video.bitrateKbps 10000)
        let n = 3
        let retain = PrerollBound.retain(seconds: n)
        let bound = PrerollBound.bytes(settings: settings, retain: retain)
        let ring = Mutex(PrerollRing<EncodedPacket>(retain: retain, byteLimit: bound))
        let maxBytes = Atomic<Int>(0)
        let audio = SyntheticAudio(channels: 1)

        func phase(_ seconds: Double, encoder: PrerollEncoder?) -> (cpu: Double, rss: Int, late: Int) {
            let start = now() + .milliseconds(100)
            let stop = Atomic<Bool>(false)
            let audioThread = Thread {
                let chunkNs = Int64(audio.chunkFrames) * 1_000_000_000 / 48_000
                var i = 0
                while !stop.load(ordering: .acquiring) {
                    sleepUntil(start + .nanoseconds(Int64(i + 1) * chunkNs))
                    let c = audio.chunk(index: i, start: start)
                    if encoder != nil { ring.withLock { $0.push(c) } }
                    i += 1
                }
            }
            audioThread.start()
            let frames = Int(seconds * Double(fps))
            // Measured after a warm-up second (encoder open, pool filled).
            var cpu0 = 0.0, wall0 = start, late = 0, rss = 0
            for i in 0..<frames {
                let t = start + .nanoseconds(Int64(i) * 1_000_000_000 / Int64(fps))
                sleepUntil(t)
                if now() - t > .milliseconds(33) { late += 1 }
                let f = video.frame(index: i, timestamp: t)
                encoder?.append(f)
                if i == fps { cpu0 = cpuSeconds(); wall0 = now() }
                if i % fps == 0 { rss = max(rss, ProcessMemory.resident) }
            }
            let cpu = (cpuSeconds() - cpu0) / (Double((now() - wall0).nanoseconds) / 1e9) * 100
            stop.store(true, ordering: .releasing)
            return (cpu, rss, late)
        }

        let off = phase(min(60, seconds), encoder: nil)
        let encoder = PrerollEncoder(settings: settings) { p in
            let b = ring.withLock { r -> Int in r.push(p); return r.bytes }
            if b > maxBytes.load(ordering: .relaxed) { maxBytes.store(b, ordering: .relaxed) }
        }
        let on = phase(seconds, encoder: encoder)
        encoder.stop()
        let (held, bytes, evictions) = ring.withLock { ($0.heldSeconds, $0.bytes, $0.capEvictions) }
        let common = ",\"preroll_s\":\(n),\"seconds\":\(Int(seconds)),\"preset\":\"\(settings.preset)\",\"late_producer_frames\":\(on.late),\"encoder_dropped_frames\":\(encoder.framesDropped)\(encoder.error.map { ",\"error\":\"\($0)\"" } ?? "")"
        emit("preroll_1080p30_cpu_percent_of_one_core", on.cpu, "%", reference: off.cpu, extra: common)
        emit("preroll_1080p30_rss", Double(on.rss) / 1_048_576, "MB", reference: Double(off.rss) / 1_048_576, extra: common)
        emit("preroll_1080p30_ring_max_bytes", Double(maxBytes.load(ordering: .relaxed)) / 1_048_576, "MB",
             reference: Double(bound) / 1_048_576,
             extra: common + ",\"held_s_at_end\":\(String(format: "%.3f", held)),\"bytes_at_end\":\(bytes),\"cap_evictions\":\(evictions)")
    }
}
