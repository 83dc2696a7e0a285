// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import ShutterCore
import ShutterMedia
import Synchronization

/// Output lines go out with one write(2) each, unbuffered, so a killed process has said them.
func say(_ line: String) {
    var bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeMutableBytes { write(1, $0.baseAddress, $0.count) }
}

@Sendable func sleepUntil(_ t: MonotonicTime) {
    var ts = timespec(tv_sec: Int(t.nanoseconds / 1_000_000_000), tv_nsec: Int(t.nanoseconds % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
}

/// The `record` command, kept out of main.swift so nothing here is main-actor isolated
/// (its threads and the signal handler call into it).
enum RecordTool {
    static func run(_ arguments: [String]) -> Never {
        var args = arguments

        guard args.first == "record" else { fail("usage: shutter-media-tool record --out PATH [options]") }
        args.removeFirst()
        var options: [String: String] = [:]
        var flags: Set<String> = []
        while let a = args.first {
            args.removeFirst()
            guard a.hasPrefix("--") else { fail("unexpected argument \(a)") }
            if a == "--stamp" { flags.insert(a); continue }
            guard let v = args.first else { fail("\(a) needs a value") }
            args.removeFirst()
            options[String(a.dropFirst(2))] = v
        }
        guard let out = options["out"] else { fail("--out is required") }
        let seconds = Double(options["seconds"] ?? "10") ?? 10
        let size = (options["size"] ?? "640x360").split(separator: "x").compactMap { Int($0) }
        guard size.count == 2 else { fail("--size is WIDTHxHEIGHT") }
        var s0 = RecordingSettings()
        s0.fps = Int(options["fps"] ?? "30") ?? 30
        s0.segmentSeconds = Double(options["segment"] ?? "0") ?? 0
        s0.videoEncoder = options["encoder"] ?? s0.videoEncoder
        s0.preset = options["preset"] ?? s0.preset
        s0.audioChannels = Int(options["channels"] ?? "1") ?? 1
        let settings = s0
        let stamp = flags.contains("--stamp")

        let clock = SystemClock()
        let video = SyntheticVideo(width: size[0], height: size[1])
        let audio = SyntheticAudio(channels: max(1, settings.audioChannels))
        let start = clock.now()
        let segment = Mutex(0)
        let recorder: Recorder
        do {
            // One "durable FRAMES MS" line per synced fragment: what a kill from now on
            // cannot take away (the signal tests check against it, not against the clock).
            recorder = try Recorder(settings: settings, start: start, nextPath: {
                let n = segment.withLock { s in s += 1; return s }
                return out.replacingOccurrences(of: "%d", with: String(n))
            }, onDurable: { m in say("durable \(m.frames) \(m.mediaTime.milliseconds)") })
        } catch {
            fail("\(error)")
        }
        say("started \(start.nanoseconds)")

        let stopping = Atomic<Bool>(false)

        @Sendable func stop(_ why: String) {
            guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
            let s = recorder.finish()
            let paths = s.paths.map { "\"\($0)\"" }.joined(separator: ",")
            let error = s.error.map { "\"\($0.code.rawValue)\"" } ?? "null"
            say("{\"stop\":\"\(why)\",\"paths\":[\(paths)],\"frames\":\(s.framesWritten),\"dropped\":\(s.framesDropped),\"duration_ms\":\(s.duration.milliseconds),\"error\":\(error)}")
            exit(s.error == nil ? 0 : 1)
        }


        let frameCount = Int(seconds * Double(settings.fps))
        let videoThread = Thread {
            for i in 0..<frameCount {
                let t = start + .nanoseconds(Int64(i) * 1_000_000_000 / Int64(settings.fps))
                sleepUntil(t)
                if stopping.load(ordering: .acquiring) { return }
                recorder.append(stamp ? video.stampedFrame(index: i, timestamp: t) : video.frame(index: i, timestamp: t))
            }
            stop("done")
        }
        let audioThread = Thread {
            guard settings.audioChannels > 0 else { return }
            let chunkNs = Int64(audio.chunkFrames) * 1_000_000_000 / Int64(audio.sampleRate)
            var i = 0
            while !stopping.load(ordering: .acquiring) {
                // A chunk is delivered when its last sample has been captured, as ALSA does.
                sleepUntil(start + .nanoseconds(Int64(i + 1) * chunkNs))
                recorder.append(audio.chunk(index: i, start: start))
                i += 1
            }
        }

        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let signalQueue = DispatchQueue(label: "shutter-media-tool.signals")
        let sources = [SIGTERM, SIGINT].map { sig in
            let s = DispatchSource.makeSignalSource(signal: sig, queue: signalQueue)
            s.setEventHandler { stop(sig == SIGTERM ? "SIGTERM" : "SIGINT") }
            s.resume()
            return s
        }
        videoThread.start()
        audioThread.start()
        withExtendedLifetime(sources) { dispatchMain() }

    }
}

func fail(_ text: String) -> Never {
    FileHandle.standardError.write(Data("shutter-media-tool: \(text)\n".utf8))
    exit(2)
}
