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
/// video gives way and sound does not: frames are left out before they are copied, evenly
/// at the pace the encoder shows (`FrameThinning`), or dropped when the pool is full anyway;
/// queued frames too close to the last one taken (the backlog of the encoder's opening, when
/// that pace was not known yet) are passed over, so the backlog drains instead of leaving a gap;
/// sound waits up to `audioSeconds` (it is small: 30 s of 48 kHz stereo is 5.5 MB).
///
/// Work in flight (`work`, a service's `InFlight`): each item counts from its push until
/// the encoder thread is done with it (it comes back to `pop` for the next, or ends).
// Unchecked: fields guarded by `cond`, a pthread condition `pop`, `push(wait:)` and `waitForResult` wait on (a Mutex cannot).
final class RecordingQueue: @unchecked Sendable {
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
    /// Frames come from a producer that waits for room (stored frames): none is passed over.
    private var offline = false
    /// The size of a pool buffer once the encoder knows it (0: not yet).
    private var poolBytes = 0
    /// Sample frames of sound waiting (its bound is by time: `audioSeconds`).
    private var audioQueued = 0
    private var finishing = false
    private var failure: RecordingError?
    /// Frames not queued because the encoder was behind: left out by the pace or the pool full.
    private(set) var framesDropped = 0
    /// Of `framesDropped`, those the pace left out.
    private(set) var framesThinned = 0
    private var thinning: FrameThinning
    /// The timestamp of the last frame given to the encoder.
    private var lastTaken: MonotonicTime?
    /// When the encoder took the frame it is on (nil: not on a frame).
    private var encodingSince: MonotonicTime?
    private let clock: any MonotonicClock
    private(set) var framesSkipped = 0
    private(set) var audioOverrunFrames = 0
    private(set) var audioFramesDropped = 0
    private var result: RecordingSummary?
    private var resultTaken = false
    /// Capture time of the newest frame offered (taken or dropped).
    private var newest: MonotonicTime?
    /// The newest durable point the encoder thread reported.
    private var durableMark: DurableMark?

    private let work: InFlight?
    /// The item the encoder thread took last is counted in `work` until its next `pop`.
    private var holding = false

    let frameCapacity: Int
    /// Seconds of sound that may wait for the encoder.
    static let audioSeconds = 30

    /// The time stamp drawn into each copy as the encoder takes it (docs/overlay.md).
    private let overlay: TextOverlay?

    /// `clock`: the encoder's cost is measured on it (wall time; a test's manual clock).
    init(frameCapacity: Int, clock: any MonotonicClock = SystemClock(), work: InFlight? = nil,
         overlay: TextOverlay? = nil) {
        self.frameCapacity = frameCapacity
        self.overlay = overlay
        self.clock = clock
        self.work = work
        thinning = FrameThinning(capacity: frameCapacity)
    }

    /// Whether the encoder's pace takes this frame (`FrameThinning`); a frame left out is
    /// counted. Once per frame, before it is copied: then `push(frame:paced: false)`.
    func takes(frame: Frame) -> (taken: Bool, firstDrop: Bool) {
        cond.locked {
            if newest.map({ frame.timestamp > $0 }) ?? true { newest = frame.timestamp }
            if finishing || failure != nil { return (false, false) }
            let now = clock.now()
            if thinning.admit(timestamp: frame.timestamp, now: now, queued: framesInFlight,
                              busyFor: encodingSince.map { now - $0 }) {
                return (true, false)
            }
            framesDropped += 1
            framesThinned += 1
            return (false, framesDropped == 1)
        }
    }

    /// Copies the frame into a pooled buffer and queues it. False when dropped.
    /// `paced`: ask `takes(frame:)` first (false: the caller did). `wait`: block while the
    /// pool is full instead of dropping, never paced (offline use, never the camera).
    func push(frame: Frame, paced: Bool = true, wait: Bool = false) -> (accepted: Bool, firstDrop: Bool) {
        if paced && !wait {
            let t = takes(frame: frame)
            if !t.taken { return (false, t.firstDrop) }
        }
        let needed = QueuedFrame.byteCount(of: frame)
        cond.lock()
        if newest.map({ frame.timestamp > $0 }) ?? true { newest = frame.timestamp }
        if wait { offline = true }
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
        queued.queuedAt = clock.now()
        work?.begin()
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
            work?.begin()
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
            work?.begin()
            items.append(.audio(audio))
            cond.broadcast()
        }
    }

    /// The next item for the encoder thread, or nil once finishing and drained.
    func pop() -> Item? {
        let item = take()
        // The time stamp goes into the copy, never the camera's buffer: that one is mapped
        // read-only and other consumers (the photo, metering, the preview) read it meanwhile.
        // Here, on the encoder's thread, not at the push: off the loop (pre-roll's producer),
        // and not for frames passed over.
        if let overlay, case .video(let f) = item { f.stamp(overlay) }
        return item
    }

    /// The next item for the encoder thread (under the lock).
    private func take() -> Item? {
        cond.lock()
        defer { cond.unlock() }
        if holding {
            holding = false
            work?.end()  // the item taken before: done
        }
        while true {
            while head == items.count && !finishing {
                if !growPoolWhileIdle() { cond.wait() }
            }
            if head == items.count { return nil }
            let item = items[head]
            head += 1
            if head > 256 && head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
            switch item {
            case .audio(let a): audioQueued -= a.frameCount
            case .video(let f):
                // The queue is scanned for the next frame only once a cost is known.
                if !offline, let last = lastTaken, let window = thinning.passOverWindow(waited: clock.now() - f.queuedAt),
                   let next = nextQueuedFrameTime(), next - last <= window {
                    framesInFlight -= 1
                    freeBuffers.append(f.buffer)
                    framesDropped += 1
                    framesThinned += 1
                    cond.broadcast()
                    work?.end()
                    continue
                }
                lastTaken = f.timestamp
                encodingSince = clock.now()
            case .packet: break
            }
            holding = true
            return item
        }
    }

    /// The timestamp of the first frame queued after the head (under the lock).
    private func nextQueuedFrameTime() -> MonotonicTime? {
        for i in head..<items.count { if case .video(let f) = items[i] { return f.timestamp } }
        return nil
    }

    /// The next item if one is queued, without waiting (a test's virtual encoder).
    func tryPop() -> Item? {
        let empty = cond.locked { head == items.count }
        return empty ? nil : pop()
    }


    /// The pool's frames are `byteCount` long: from now on it is filled to its capacity one
    /// touched buffer each time the encoder waits for work (`pop`), so resident memory is
    /// flat from the first seconds on (a pool grown only by the camera's side grows at the
    /// first encoder hiccup, minutes into a clip) and an encoder that never waits (a starved
    /// CPU) does not spend its opening on 12 frames it will not need (0.3-0.9 s at 8 % of a
    /// core, measured). Called on the encoder thread when it opens a file.
    func fillPoolWhileIdle(byteCount: Int) { cond.locked { poolBytes = byteCount } }

    /// Under the lock: one more touched buffer for the pool, if it is short, allocated with
    /// the lock released (kept only if a producer did not allocate one meanwhile). Whether the
    /// pool was short.
    private func growPoolWhileIdle() -> Bool {
        guard poolBytes > 0, framesInFlight + freeBuffers.count < frameCapacity else { return false }
        let n = poolBytes
        cond.unlock()
        let b = OwnedFrameBuffer(capacity: n)
        b.bytes.initializeMemory(as: UInt8.self, repeating: 0, count: n)
        cond.lock()
        if framesInFlight + freeBuffers.count < frameCapacity { freeBuffers.append(b) }
        return true
    }

    /// The encoder is done with a frame copy: its buffer goes back to the pool. `measured`:
    /// its time counts for the pace (not a frame that opened an encoder or a file).
    func recycle(_ frame: QueuedFrame, measured: Bool = true) {
        cond.locked {
            if !measured {
                thinning.encoderOpened(now: clock.now())
            } else if let since = encodingSince {
                thinning.encoded(cost: clock.now() - since)
            }
            encodingSince = nil
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
    /// Buffers in the pool, free for a copy.
    var pooledBuffers: Int { cond.locked { freeBuffers.count } }

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
        s.framesThinned = framesThinned
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
