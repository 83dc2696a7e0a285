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

/// The bounded hand-off between the camera/microphone threads and the encoder thread,
/// with the pool of frame copies. Producers never wait: a full queue drops and counts.
///
/// When the encoder cannot keep up (a starved CPU, a card whose sync hangs for seconds),
/// video gives way and sound does not: frames are dropped before they are copied, and
/// sound waits up to `audioSeconds` (it is small: 30 s of 48 kHz stereo is 5.5 MB).
final class RecordingQueue: @unchecked Sendable {
    // Unchecked: every mutable field below is guarded by `cond` (an NSCondition lock).
    enum Item {
        case video(QueuedFrame)
        case audio(AudioChunk)
        /// Already encoded (pre-roll): held by reference, no copy, no pool slot.
        case packet(EncodedPacket)
    }

    private let cond = PlainCondition()
    private var items: [Item] = []
    private var head = 0
    private var freeBuffers: [OwnedFrameBuffer] = []
    private var framesInFlight = 0
    /// Sample frames of sound waiting (its bound is by time: `audioSeconds`).
    private var audioQueued = 0
    private var finishing = false
    private var failure: RecordingError?
    private(set) var framesDropped = 0
    private(set) var framesSkipped = 0
    private(set) var audioOverrunFrames = 0
    private(set) var audioFramesDropped = 0
    private var result: RecordingSummary?
    private var resultTaken = false
    /// Capture time of the newest frame offered (taken or dropped).
    private var newest: MonotonicTime?
    /// The newest durable point the encoder thread reported.
    private var durableMark: DurableMark?

    let frameCapacity: Int
    /// Seconds of sound that may wait for the encoder.
    static let audioSeconds = 30

    init(frameCapacity: Int) {
        self.frameCapacity = frameCapacity
    }

    /// Copies the frame into a pooled buffer and queues it. False when dropped.
    /// `wait`: block while the pool is full instead of dropping (offline use, never the camera).
    func push(frame: Frame, wait: Bool = false) -> (accepted: Bool, firstDrop: Bool) {
        let needed = QueuedFrame.byteCount(of: frame)
        cond.lock()
        if newest.map({ frame.timestamp > $0 }) ?? true { newest = frame.timestamp }
        while wait && framesInFlight >= frameCapacity && !finishing && failure == nil { cond.wait() }
        if finishing || failure != nil { cond.unlock(); return (false, false) }
        if framesInFlight >= frameCapacity {
            framesDropped += 1
            let first = framesDropped == 1
            cond.unlock()
            return (false, first)
        }
        framesInFlight += 1
        var buffer = freeBuffers.popLast()
        cond.unlock()
        // The copy runs outside the lock: only this producer owns the buffer now.
        if buffer == nil || buffer!.capacity < needed { buffer = OwnedFrameBuffer(capacity: needed) }
        let queued = QueuedFrame(copying: frame, into: buffer!)
        cond.lock()
        items.append(.video(queued))
        cond.broadcast()
        cond.unlock()
        return (true, false)
    }

    /// Queues an encoded packet. False once finishing or failed.
    func push(packet: EncodedPacket) -> Bool {
        cond.locked {
            if newest.map({ packet.time > $0 }) ?? true { newest = packet.time }
            if finishing || failure != nil { return false }
            items.append(.packet(packet))
            cond.broadcast()
            return true
        }
    }

    func countSkipped() { cond.locked { framesSkipped += 1 } }

    /// `held`: the chunk is already held in memory elsewhere (the pre-roll ring), so it
    /// is queued beyond `audioCapacity` rather than dropped.
    func push(audio: AudioChunk, held: Bool = false) {
        cond.locked {
            audioOverrunFrames += audio.droppedFramesBefore
            if finishing || failure != nil { return }
            if audioQueued >= Self.audioSeconds * audio.sampleRate && !held {
                audioFramesDropped += audio.frameCount
                return
            }
            audioQueued += audio.frameCount
            items.append(.audio(audio))
            cond.broadcast()
        }
    }

    /// The next item for the encoder thread, or nil once finishing and drained.
    func pop() -> Item? {
        cond.lock()
        defer { cond.unlock() }
        while head == items.count && !finishing { cond.wait() }
        if head == items.count { return nil }
        let item = items[head]
        head += 1
        if head > 256 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        if case .audio(let a) = item { audioQueued -= a.frameCount }
        return item
    }

    /// The next item if one is queued, without waiting (a test's virtual encoder).
    func tryPop() -> Item? {
        let empty = cond.locked { head == items.count }
        return empty ? nil : pop()
    }


    /// Fills the pool to its capacity with touched buffers of `byteCount`, so resident memory
    /// is flat from the first frame on (a pool grown lazily grows at the first encoder
    /// hiccup, minutes into a clip). Runs on the encoder thread, not the camera's.
    func preallocate(byteCount: Int) {
        let missing = cond.locked { frameCapacity - framesInFlight - freeBuffers.count }
        guard missing > 0 else { return }
        let fresh = (0..<missing).map { _ in
            let b = OwnedFrameBuffer(capacity: byteCount)
            b.bytes.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
            return b
        }
        cond.locked { freeBuffers.append(contentsOf: fresh) }
    }

    /// The encoder is done with a frame copy: its buffer goes back to the pool.
    func recycle(_ frame: QueuedFrame) {
        cond.locked {
            framesInFlight -= 1
            freeBuffers.append(frame.buffer)
            cond.broadcast()
        }
    }

    func finish() { cond.locked { finishing = true; cond.broadcast() } }

    /// The encoder thread hit an error: producers stop queueing, the error is visible.
    func fail(_ error: RecordingError) {
        cond.locked {
            if failure == nil { failure = error }
            cond.broadcast()
        }
    }
    var error: RecordingError? { cond.locked { failure } }
    var newestFrame: MonotonicTime? { cond.locked { newest } }
    var durable: DurableMark? {
        get { cond.locked { durableMark } }
        set { cond.locked { durableMark = newValue } }
    }
    var framesDroppedNow: Int { cond.locked { framesDropped } }

    /// Set by the encoder thread as its last act; waited for by `finish()`.
    func complete(_ summary: RecordingSummary) {
        cond.locked { result = summary; cond.broadcast() }
    }

    /// The summary, and whether this is the first call to get it.
    func waitForResult() -> (RecordingSummary, Bool) {
        cond.lock()
        defer { cond.unlock() }
        while result == nil { cond.wait() }
        let first = !resultTaken
        resultTaken = true
        var s = result!
        s.framesDropped = framesDropped
        s.framesSkipped += framesSkipped
        s.audioOverrunFrames = audioOverrunFrames
        s.audioFramesDropped = audioFramesDropped
        return (s, first)
    }
}

extension PlainCondition {
    // Own helper: NSLocking.withLock is not in every Swift 6.0 Foundation on Linux.
    fileprivate func locked<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
