// SPDX-License-Identifier: BSD-2-Clause
import Dispatch

/// Slow work the loop decided on (a JPEG encode, an fsync and rename, an AF
/// cycle, a camera reopen): collected while an event is handled and started by
/// the run loop once the event is done (CameraService.run). Each comes back as
/// `.done(result)`. The loop never waits for one, and no job waits for another:
/// the loop handles what a result says when it comes, and starts the next.
///
/// Three kinds, one hop each way: blocking work (the card, libjpeg-turbo) runs on the
/// serial queue it names and posts its result from there; work that awaits a device
/// (an AF cycle, a reopen) runs as a task of the service's group; work a device's own
/// queue already does in the order the loop asked (the clip encoder's commit, finish,
/// discard) answers through `answerLater` when it ends.
final class Jobs {
    enum Job {
        case task(@Sendable () async -> JobResult)
        case queue(DispatchQueue, @Sendable () -> JobResult)
    }

    private(set) var queued: [Job] = []
    /// Started and not yet back: the service stops only once this is zero.
    private(set) var inFlight = 0
    /// Posts a result into the loop's inbox as `.done` (CameraService.run's inbox).
    private let post: @Sendable (ServiceEvent) -> Void

    init(post: @escaping @Sendable (ServiceEvent) -> Void) { self.post = post }

    /// Queues `work` as a task: the run loop starts it once the current event is handled.
    func add(_ work: @escaping @Sendable () async -> JobResult) {
        queued.append(.task(work))
        inFlight += 1
    }

    /// Queues blocking `work` for `queue` (in the order given, after the work queued there before).
    func run(on queue: DispatchQueue, _ work: @escaping @Sendable () -> JobResult) {
        queued.append(.queue(queue, work))
        inFlight += 1
    }

    /// Work the caller starts now on a device's own queue: the answer it calls once,
    /// from there, with the result (counted in flight until it comes back as `.done`).
    func answerLater() -> @Sendable (JobResult) -> Void {
        inFlight += 1
        let post = self.post
        return { post(.done($0)) }
    }

    /// Posts into the loop's inbox: for work on a thread of its own that tells the loop how
    /// far it got before its answer (a time-lapse's progress).
    var poster: @Sendable (ServiceEvent) -> Void { post }

    /// The jobs decided since the last call, for the run loop to start.
    func take() -> [Job] {
        defer { queued.removeAll() }
        return queued
    }

    /// A job's result has come back.
    func finished() { inFlight -= 1 }
}
