import Foundation
import ShutterCore
import Synchronization

/// A microphone that plays a known tone (default 1 kHz at half scale) at the
/// requested rate, in 10 ms chunks paced in real time. Timestamps come from the
/// sample clock anchored on CLOCK_MONOTONIC at start, as ALSA's would.
public final class SimMicrophone: Microphone {
    public let frequency: Double
    public let amplitude: Double

    private struct State {
        var generation: UInt64 = 0
        var continuation: AsyncStream<AudioChunk>.Continuation?
        var overruns = 0
    }

    private let state = Mutex(State())

    public init(frequency: Double = 1000, amplitude: Double = 0.5) {
        self.frequency = frequency
        self.amplitude = amplitude
    }

    public var overruns: Int { state.withLock { $0.overruns } }

    public func start(sampleRate: Int, channels: Int) throws -> AsyncStream<AudioChunk> {
        let (stream, continuation) = AsyncStream<AudioChunk>.makeStream(bufferingPolicy: .bufferingNewest(200))
        let generation: UInt64 = state.withLock { s in
            s.continuation?.finish()
            s.continuation = continuation
            s.generation += 1
            return s.generation
        }
        let thread = Thread { [self] in run(generation: generation, rate: sampleRate, channels: channels) }
        thread.name = "sim-mic"
        thread.start()
        return stream
    }

    public func stop() {
        let c: AsyncStream<AudioChunk>.Continuation? = state.withLock { s in
            s.generation += 1
            defer { s.continuation = nil }
            return s.continuation
        }
        c?.finish()
    }

    private func run(generation: UInt64, rate: Int, channels: Int) {
        let chunkFrames = rate / 100
        let origin = SystemClock().now()
        var sampleIndex: Int64 = 0
        var samples = [Int16](repeating: 0, count: chunkFrames * channels)
        let step = 2 * Double.pi * frequency / Double(rate)
        while true {
            // A chunk is delivered once its last sample has been "captured".
            let endNs = origin.nanoseconds + (sampleIndex + Int64(chunkFrames)) * 1_000_000_000 / Int64(rate)
            var ts = timespec(tv_sec: Int(endNs / 1_000_000_000), tv_nsec: Int(endNs % 1_000_000_000))
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
            for i in 0..<chunkFrames {
                let v = Int16(amplitude * 32767 * sin(step * Double(sampleIndex + Int64(i))))
                for c in 0..<channels { samples[i * channels + c] = v }
            }
            let stamp = MonotonicTime(nanoseconds: origin.nanoseconds + sampleIndex * 1_000_000_000 / Int64(rate))
            let chunk = AudioChunk(samples: samples, channels: channels, sampleRate: rate, timestamp: stamp)
            let c: AsyncStream<AudioChunk>.Continuation? = state.withLock { s in
                s.generation == generation ? s.continuation : nil
            }
            guard let c else { return }
            if case .dropped = c.yield(chunk) { state.withLock { $0.overruns += 1 } }
            sampleIndex += Int64(chunkFrames)
        }
    }
}
