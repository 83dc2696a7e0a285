// SPDX-License-Identifier: BSD-2-Clause
import CALSA
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
import Synchronization

/// The microphone through ALSA directly (works in a system service, where no
/// PulseAudio/PipeWire session exists). A dedicated thread reads S16_LE periods
/// with `snd_pcm_readi` and yields AudioChunks into a bounded AsyncStream.
/// Overruns are recovered with `snd_pcm_recover`, counted, and reported as the
/// next chunk's `droppedFramesBefore`. When the device goes away (USB unplugged)
/// the stream ends and `endReason` says why: a recording carries on without audio.
public final class ALSAMicrophone: Microphone {
    /// "default", "plughw:CARD=Device,DEV=0", any PCM name, or "auto" (first USB capture card).
    public let device: String
    public let periodFrames: Int
    public let bufferedChunks: Int
    private let log: @Sendable (String) -> Void
    private let current = Mutex<CaptureSession?>(nil)
    private let overrunCount = Atomic<Int>(0)
    private let droppedChunkCount = Atomic<Int>(0)
    private let lastEnd = Mutex<ALSAError?>(nil)

    /// - Parameters:
    ///   - periodFrames: frames per read and per chunk (1024 at 48 kHz is ~21 ms).
    ///   - bufferedChunks: chunks the stream holds for a slow consumer; beyond that
    ///     new chunks are dropped and counted (the capture thread never blocks).
    public init(device: String = "default", periodFrames: Int = 1024, bufferedChunks: Int = 256,
                log: @escaping @Sendable (String) -> Void = GPIOButton.logToStderr) {
        self.device = device
        self.periodFrames = max(32, periodFrames)
        self.bufferedChunks = max(1, bufferedChunks)
        self.log = log
    }

    deinit { stop() }

    /// Overruns (the consumer thread was late and ALSA's ring buffer overflowed), all sessions.
    public var overruns: Int { overrunCount.load(ordering: .relaxed) }
    /// Chunks the stream's consumer was too slow for.
    public var droppedChunks: Int { droppedChunkCount.load(ordering: .relaxed) }
    /// Why the last stream ended by itself (device gone); nil after a normal stop.
    public var endReason: ALSAError? { lastEnd.withLock { $0 } }
    /// The rate the device granted for the running session (a plughw: device gives the rate asked).
    public var grantedSampleRate: Int? { current.withLock { $0?.granted.withLock { $0?.rate } } }

    /// Opens the device and starts capturing. Throws ALSAError when the device is
    /// missing, busy, forbidden or refuses the format. A running session is stopped first.
    public func start(sampleRate: Int, channels: Int) throws -> AsyncStream<AudioChunk> {
        guard (1...2).contains(channels), sampleRate > 0 else {
            throw ALSAError(.unsupportedFormat,
                            "Capture needs 1 or 2 channels and a positive rate (asked \(channels) "
                                + "channels at \(sampleRate) Hz). Fix the audio settings in the config.")
        }
        stop()
        let name = device == "auto" ? try ALSACaptureDevices.firstUSBCapture() : device
        lastEnd.withLock { $0 = nil }
        let (stream, continuation) = AsyncStream.makeStream(
            of: AudioChunk.self, bufferingPolicy: .bufferingOldest(bufferedChunks))
        let session = CaptureSession(device: name, sampleRate: sampleRate, channels: channels,
                                     periodFrames: periodFrames)
        continuation.onTermination = { _ in session.requestStop() }
        PlainThread.start(name: "shutter.alsa") { [self] in
            self.capture(session, continuation)
        }
        session.opened.wait()
        if let error = session.openError.withLock({ $0 }) {
            session.exited.wait()
            throw error
        }
        current.withLock { $0 = session }
        return stream
    }

    /// Stops capturing and ends the stream; returns once the capture thread let go of
    /// the device (within ~200 ms; bounded: a hung driver is left behind after 2 s, with a log line).
    public func stop() {
        guard let session = current.withLock({ s -> CaptureSession? in let c = s; s = nil; return c }) else { return }
        session.requestStop()
        if session.exited.wait(timeout: .now() + .seconds(2)) == .timedOut {
            log("<4>shutter.audio: the capture thread for \(session.device) did not stop within 2 s; leaving it.")
        }
    }

    // MARK: - Capture thread

    private func capture(_ session: CaptureSession, _ continuation: AsyncStream<AudioChunk>.Continuation) {
        defer {
            continuation.finish()
            session.exited.signal()
        }
        let pcm: OpaquePointer
        let granted: CaptureSession.Granted
        do {
            (pcm, granted) = try PCMCapture.open(session.device, sampleRate: session.sampleRate,
                                                 channels: session.channels, periodFrames: session.periodFrames)
            session.granted.withLock { $0 = granted }
        } catch {
            session.openError.withLock { $0 = error as? ALSAError }
            session.opened.signal()
            return
        }
        session.opened.signal()
        defer { snd_pcm_close(pcm) }

        let rate = granted.rate
        let period = granted.periodFrames
        let channels = session.channels
        var clock = AudioChunkClock(sampleRate: rate)
        var status: OpaquePointer?
        guard snd_pcm_status_malloc(&status) == 0, let status else { return }
        defer { snd_pcm_status_free(status) }
        var pendingDropped = 0
        var overrunPending = false
        var silentWaits = 0

        while !session.stopRequested {
            let ready = snd_pcm_wait(pcm, 200)
            if ready == 0 {
                // No data yet: look at the stop flag again. A device that delivers
                // nothing for 3 s without an error has stalled (a wedged USB card).
                silentWaits += 1
                if silentWaits >= 15 {
                    end(session, ALSAError(.deviceGone,
                                           "The microphone \"\(session.device)\" stopped delivering "
                                               + "audio for 3 s. Recording continues without audio; check the "
                                               + "device (`arecord -l`, dmesg)."))
                    return
                }
                continue
            }
            silentWaits = 0
            var samples = [Int16](repeating: 0, count: period * channels)
            let n = ready < 0 ? Int(ready) : samples.withUnsafeMutableBytes {
                Int(snd_pcm_readi(pcm, $0.baseAddress, snd_pcm_uframes_t(period)))
            }
            if n < 0 {
                let rc = Int32(n)
                if rc == -EAGAIN || rc == -EINTR { continue }
                if rc == -EPIPE || rc == -ESTRPIPE {
                    overrunCount.add(1, ordering: .relaxed)
                    overrunPending = true
                    let r = snd_pcm_recover(pcm, rc, 1)
                    if r == 0 { _ = snd_pcm_start(pcm); continue }
                    end(session, PCMCapture.gone(rc: r, device: session.device, during: "recovering from an overrun"))
                    return
                }
                end(session, PCMCapture.gone(rc: rc, device: session.device, during: "reading"))
                return
            }
            if n == 0 { continue }
            if n < period { samples.removeLast((period - n) * channels) }
            let measured = PCMCapture.firstSampleTime(pcm, status: status, frames: n, rate: rate)
            let (time, gap) = clock.stamp(frames: n, measuredStart: measured)
            let lost = pendingDropped + (overrunPending ? gap : 0)
            overrunPending = false
            let chunk = AudioChunk(samples: samples, channels: channels, sampleRate: rate, timestamp: time,
                                   droppedFramesBefore: lost)
            switch continuation.yield(chunk) {
            case .enqueued:
                pendingDropped = 0
            case .dropped:
                droppedChunkCount.add(1, ordering: .relaxed)
                pendingDropped = lost + n
            case .terminated:
                return
            @unknown default:
                return
            }
        }
    }

    private func end(_ session: CaptureSession, _ error: ALSAError) {
        lastEnd.withLock { $0 = error }
        log("<3>shutter.audio: \(error.message)")
    }
}

/// One start()..stop() of the microphone: what was asked, what was granted, and
/// the flags the capture thread and the caller share.
final class CaptureSession: Sendable {
    struct Granted: Sendable {
        var rate: Int
        var periodFrames: Int
    }

    let device: String
    let sampleRate: Int
    let channels: Int
    let periodFrames: Int
    let granted = Mutex<Granted?>(nil)
    let openError = Mutex<ALSAError?>(nil)
    let opened = DispatchSemaphore(value: 0)
    let exited = DispatchSemaphore(value: 0)
    private let stopFlag = Atomic<Bool>(false)

    init(device: String, sampleRate: Int, channels: Int, periodFrames: Int) {
        self.device = device
        self.sampleRate = sampleRate
        self.channels = channels
        self.periodFrames = periodFrames
    }

    var stopRequested: Bool { stopFlag.load(ordering: .acquiring) }
    func requestStop() { stopFlag.store(true, ordering: .releasing) }
}
