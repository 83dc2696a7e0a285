// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterStorage

/// Who is waiting for what. Each request (a socket command, a released button
/// press a client made) waits on its own origin; the state machine's actions
/// say which capture an origin became (`takePhoto`, `startRecording`,
/// `answers`...) or that it was refused, and a capture's outcome goes to the
/// origins bound to it and to no one else. A request that stopped being pending
/// without a capture (a double tap, the shutdown gesture's press) is answered
/// as such, so no client waits for a file that will never come.
struct RequestBook {
    /// What a request is answered with.
    enum Answer: Sendable {
        case files([String], pressToDurableMs: Double, clipStartOffsetMs: Double?, photo: PhotoReport?)
        case refused(String, busy: Bool)
        case failed(String)
        /// The request was carried out and made no file (a plain button press
        /// that became a double tap, a recording started).
        case done(String, files: [String])
    }

    private struct Waiter {
        var origin: CaptureOrigin
        var reply: Reply
        var deadline: MonotonicTime
    }

    private var waiters: [Waiter] = []
    /// Capture → the origins that wait for its outcome.
    private var bound: [CaptureID: [CaptureOrigin]] = [:]
    /// When each origin began: a press time or the request's arrival.
    private var issued: [CaptureOrigin: MonotonicTime] = [:]
    private var nextRequest: UInt64 = 0
    /// Origins answered once their recording has started (`record start`).
    private var answerAtStart: Set<CaptureOrigin> = []
    /// Answers for button presses nobody waited for yet: a client's `release`
    /// may come after its press was already refused or dropped. Last few only.
    private var unclaimed: [(CaptureOrigin, Answer)] = []

    mutating func newRequest(at now: MonotonicTime) -> RequestID {
        nextRequest += 1
        let r = RequestID(nextRequest)
        issued[.request(r)] = now
        return r
    }

    /// `reply` gets the answer for `origin`, at the latest when `deadline` passes.
    mutating func wait(_ origin: CaptureOrigin, deadline: MonotonicTime, _ reply: Reply) {
        if let i = unclaimed.firstIndex(where: { $0.0 == origin }) {
            return reply.send(Self.reply(unclaimed.remove(at: i).1))
        }
        waiters.append(Waiter(origin: origin, reply: reply, deadline: deadline))
    }

    /// The state machine started capture `id` for `origin` (or made `origin`'s
    /// answer that capture's outcome).
    mutating func bind(_ origin: CaptureOrigin, to id: CaptureID) {
        bound[id, default: []].append(origin)
        if case .button(let p) = origin, issued[origin] == nil { issued[origin] = p }
    }

    /// `origin` (a `record start`) is answered when its recording starts, with its file.
    mutating func answerWhenStarted(_ origin: CaptureOrigin) { answerAtStart.insert(origin) }

    mutating func started(_ id: CaptureID, path: String) {
        for origin in bound[id] ?? [] where answerAtStart.contains(origin) {
            answerAtStart.remove(origin)
            bound[id]?.removeAll { $0 == origin }
            answer(origin, .done("recording", files: [path]))
        }
    }

    func isBound(_ origin: CaptureOrigin) -> Bool { bound.values.contains { $0.contains(origin) } }

    /// A capture ended: its files (or failure) go to every origin bound to it.
    mutating func resolve(_ id: CaptureID, _ result: Result<[String], CaptureError>, at now: MonotonicTime,
                          clipStart: MonotonicTime? = nil, photo: PhotoReport? = nil) {
        for origin in bound.removeValue(forKey: id) ?? [] {
            let since = issued.removeValue(forKey: origin) ?? now
            switch result {
            case .success(let files):
                answer(origin, .files(files, pressToDurableMs: (now - since).exactMilliseconds,
                                      clipStartOffsetMs: clipStart.map { ($0 - since).exactMilliseconds }, photo: photo))
            case .failure(let e):
                answer(origin, .failed(e.message))
            }
        }
    }

    /// Answers whoever waits on `origin`; false when nobody did.
    @discardableResult
    mutating func answer(_ origin: CaptureOrigin, _ a: Answer) -> Bool {
        issued.removeValue(forKey: origin)
        var found = false
        waiters.removeAll { w in
            guard w.origin == origin else { return false }
            w.reply.send(Self.reply(a))
            found = true
            return true
        }
        if !found, case .button = origin {
            unclaimed.append((origin, a))
            if unclaimed.count > 16 { unclaimed.removeFirst() }
        }
        return found
    }

    /// Waiters that are neither bound to a capture nor pending in the machine
    /// any more: their press made no capture.
    mutating func answerUnbound(isPending: (CaptureOrigin) -> Bool) {
        for w in waiters where !isPending(w.origin) && !isBound(w.origin) && !answerAtStart.contains(w.origin) {
            answer(w.origin, .done("the press made no capture (a double tap, or the shutdown gesture)", files: []))
        }
    }

    /// Clients whose bound has passed: answered with a time-out (the capture,
    /// if it ever finishes, is then told to no one but the log).
    mutating func expire(now: MonotonicTime, lastError: String?) {
        for w in waiters where w.deadline <= now {
            answer(w.origin, .failed("timed out waiting for the file\(lastError.map { " (last error: \($0))" } ?? "")"))
        }
    }

    var nextDeadline: MonotonicTime? { waiters.map(\.deadline).min() }

    /// Stopping: every waiter is told.
    mutating func answerAll(_ a: Answer) {
        let all = waiters
        waiters.removeAll()
        for w in all { w.reply.send(Self.reply(a)) }
    }

    /// An answer as the client reads it.
    static func reply(_ a: Answer) -> ControlReply {
        switch a {
        case let .files(files, pressToDurableMs, clipStartOffsetMs, photo):
            var r = ControlReply(ok: true, files: files)
            r.pressToDurableMs = pressToDurableMs
            r.clipStartOffsetMs = clipStartOffsetMs
            r.pressToExposureMs = photo?.pressToExposureMs
            r.releaseToDurableMs = photo?.releaseToDurableMs
            r.moment = photo?.moment
            return r
        case let .refused(message, busy):
            var r = ControlReply.failure(message)
            r.busy = busy ? true : nil
            return r
        case .failed(let message):
            return .failure(message)
        case let .done(message, files):
            var r = ControlReply(ok: true, files: files)
            r.note = message
            return r
        }
    }
}

extension Duration {
    /// With the fraction, for the figures in replies.
    var exactMilliseconds: Double { Double(nanoseconds) / 1e6 }
}
