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
import Synchronization

/// A microphone that plays a known tone (default 1 kHz at half scale) at the
/// requested rate, in 10 ms chunks paced by the injected clock. Timestamps come
/// from the sample clock anchored on the clock's timeline at `start`, as ALSA's
/// would: chunk k holds samples from `start + k * 10 ms` and is delivered once
/// its last sample has been "captured".
public final class SimMicrophone: Microphone {
    public let frequency: Double
    public let amplitude: Double

    private struct State {
        var generation: UInt64 = 0
        var stream: SimStream<AudioChunk>?
        var producer: Task<Void, Never>?
        var overruns = 0
        var deliveredSamples: Int64 = 0
    }

    private let clock: any MonotonicClock
    private let activity: SimActivity
    private let depth: Int
    private let state = Mutex(State())

    /// `depth`: chunks kept for a slow consumer before the oldest is dropped (an overrun).
    public init(frequency: Double = 1000, amplitude: Double = 0.5, clock: any MonotonicClock = SystemClock(),
                depth: Int = 200) {
        self.frequency = frequency
        self.amplitude = amplitude
        self.clock = clock
        self.depth = depth
        activity = SimActivity(clock: clock)
    }

    public var overruns: Int { state.withLock { $0.overruns } }
    /// Sample frames (per channel) delivered since this microphone was made.
    public var deliveredSamples: Int64 { state.withLock { $0.deliveredSamples } }

    public func start(sampleRate: Int, channels: Int) throws -> AsyncStream<AudioChunk> {
        let stream = SimStream<AudioChunk>(depth: depth, onChange: { [activity] in activity.changed() })
        let origin = clock.now()
        let (old, oldProducer): (SimStream<AudioChunk>?, Task<Void, Never>?) = state.withLock { s in
            let old = (s.stream, s.producer)
            s.stream = stream
            s.generation += 1
            let generation = s.generation
            let id = activity.begin()
            s.producer = Task { [self] in
                await run(id: id, generation: generation, origin: origin, rate: max(sampleRate, 100),
                          channels: max(channels, 1))
            }
            return old
        }
        oldProducer?.cancel()
        old?.finish()
        return stream.makeStream()
    }

    public func stop() {
        let (stream, producer): (SimStream<AudioChunk>?, Task<Void, Never>?) = state.withLock { s in
            s.generation += 1
            defer {
                s.stream = nil
                s.producer = nil
            }
            return (s.stream, s.producer)
        }
        producer?.cancel()
        stream?.finish()
    }

    /// Returns once the microphone's producer is asleep on the clock (or stopped).
    /// With `consumers`, also waits until the chunk stream's consumer has taken
    /// every chunk and is waiting for the next (or has gone).
    public func settle(consumers: Bool = false) async {
        await activity.wait { isSettled(consumers: consumers) }
    }

    func isSettled(consumers: Bool) -> Bool {
        guard activity.isQuiet else { return false }
        guard consumers else { return true }
        return state.withLock { $0.stream }?.consumerCaughtUp ?? true
    }

    private func run(id: UInt64, generation: UInt64, origin: MonotonicTime, rate: Int, channels: Int) async {
        defer { activity.end(id) }
        let chunkFrames = rate / 100
        var sampleIndex: Int64 = 0
        let step = 2 * Double.pi * frequency / Double(rate)
        while true {
            // A chunk is delivered once its last sample has been "captured".
            let end = MonotonicTime(nanoseconds: origin.nanoseconds
                                        + (sampleIndex + Int64(chunkFrames)) * 1_000_000_000 / Int64(rate))
            do { try await activity.sleep(id, until: end) } catch { return }
            var samples = [Int16](repeating: 0, count: chunkFrames * channels)
            for i in 0..<chunkFrames {
                let v = Int16(amplitude * 32767 * sin(step * Double(sampleIndex + Int64(i))))
                for c in 0..<channels { samples[i * channels + c] = v }
            }
            let stamp = MonotonicTime(nanoseconds: origin.nanoseconds + sampleIndex * 1_000_000_000 / Int64(rate))
            let chunk = AudioChunk(samples: samples, channels: channels, sampleRate: rate, timestamp: stamp)
            let sent: SimStream<AudioChunk>.Sent = state.withLock { s in
                guard s.generation == generation, let stream = s.stream else { return .terminated }
                let (sent, _) = stream.send(chunk)
                switch sent {
                case .terminated: break
                case .enqueued: s.deliveredSamples += Int64(chunkFrames)
                case .droppedOldest:
                    s.deliveredSamples += Int64(chunkFrames)
                    s.overruns += 1
                }
                return sent
            }
            if sent == .terminated { return }
            sampleIndex += Int64(chunkFrames)
        }
    }
}
