// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// What the pre-roll ring needs to know of an encoded video packet.
public protocol PrerollPacket {
    /// The frame's capture time (sensor timestamp), rising.
    var time: MonotonicTime { get }
    var isKey: Bool { get }
    var bytes: Int { get }
}

/// The last seconds of encoded video (by reference) and microphone audio, kept while
/// idle so a clip can start before the press. Bounded twice:
/// - by time: from the last keyframe at or before `newest − retain` on, where `retain`
///   is the pre-roll plus the slack a press takes to be known;
/// - by bytes: over `byteLimit`, whole GOPs go from the front (the pre-roll held
///   shortens; `capEvictions` counts it). The video always starts at a keyframe.
/// Audio is kept from the video's first packet on. Not thread-safe: one owner.
public struct PrerollRing<Packet: PrerollPacket> {
    public let retain: Duration
    public let byteLimit: Int
    public private(set) var video: [Packet] = []
    public private(set) var audio: [AudioChunk] = []
    public private(set) var videoBytes = 0
    public private(set) var audioBytes = 0
    /// GOPs dropped because the byte limit was reached (not by age).
    public private(set) var capEvictions = 0

    public init(retain: Duration, byteLimit: Int) {
        self.retain = retain
        self.byteLimit = max(0, byteLimit)
    }

    public var bytes: Int { videoBytes + audioBytes }

    /// Seconds of video held, first packet to newest.
    public var heldSeconds: Double {
        guard let first = video.first, let last = video.last else { return 0 }
        return Double((last.time - first.time).nanoseconds) / 1e9
    }

    public mutating func push(_ p: Packet) {
        if let last = video.last, p.time <= last.time { return }
        if video.isEmpty && !p.isKey { return }  // a file can only start at a keyframe
        video.append(p)
        videoBytes += p.bytes
        // Age: keep from the last keyframe at or before newest − retain.
        let horizon = p.time - retain
        if let k = video.lastIndex(where: { $0.isKey && $0.time <= horizon }), k > 0 { dropVideo(k) }
        while bytes > byteLimit, !video.isEmpty {
            capEvictions += 1
            let next = video.dropFirst().firstIndex(where: \.isKey) ?? video.count
            dropVideo(next)
        }
        trimAudio()
    }

    public mutating func push(_ chunk: AudioChunk) {
        audio.append(chunk)
        audioBytes += chunk.samples.count * MemoryLayout<Int16>.size
        trimAudio()
    }

    public mutating func removeAll() {
        video.removeAll()
        audio.removeAll()
        videoBytes = 0
        audioBytes = 0
    }

    /// Index of the keyframe nearest `target` (the earlier on a tie); nil when empty.
    public func startIndex(for target: MonotonicTime) -> Int? {
        var best: Int?
        for (i, p) in video.enumerated() where p.isKey {
            guard let b = best else { best = i; continue }
            if abs((p.time - target).nanoseconds) < abs((video[b].time - target).nanoseconds) { best = i }
        }
        return best
    }

    /// What a clip reaching back to `target` starts with: the video from the keyframe
    /// nearest `target`, and the audio chunks that end after that keyframe (the writer
    /// cuts the samples before it: both streams start at the keyframe's time).
    public func clip(from target: MonotonicTime) -> (video: [Packet], audio: [AudioChunk])? {
        guard let i = startIndex(for: target) else { return nil }
        let start = video[i].time
        return (Array(video[i...]), audio.filter { audioEnd($0) > start })
    }

    private mutating func dropVideo(_ count: Int) {
        for p in video.prefix(count) { videoBytes -= p.bytes }
        video.removeFirst(count)
    }

    /// Audio before the first video packet (or, with no video, older than `retain`) goes.
    private mutating func trimAudio() {
        guard let newest = audio.last.map(audioEnd) else { return }
        let from = video.first?.time ?? (newest - retain)
        while let a = audio.first, audioEnd(a) <= from {
            audioBytes -= a.samples.count * MemoryLayout<Int16>.size
            audio.removeFirst()
        }
        while audioBytes > 0, bytes > byteLimit, let a = audio.first {  // video gone at the cap
            audioBytes -= a.samples.count * MemoryLayout<Int16>.size
            audio.removeFirst()
        }
    }

}

/// Just past the last sample of a chunk.
func audioEnd(_ a: AudioChunk) -> MonotonicTime {
    a.timestamp + .nanoseconds(Int64(a.frameCount) * 1_000_000_000 / Int64(max(1, a.sampleRate)))
}
