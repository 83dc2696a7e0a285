// SPDX-License-Identifier: BSD-2-Clause
/// Slow work the loop decided on (a JPEG encode, an fsync and rename, an AF
/// cycle, a camera reopen, an LED pattern): collected while an event is handled
/// and started by the run loop as children of the service's task group once
/// the event is done (CameraService.run). Each comes back as `.done(result)`.
/// The loop never waits for one: it handles what the result says when it comes.
/// Each counts as work in flight (a `WorkToken`) from its start until its result is
/// posted, except while it waits for the clock, a device or another's result.
final class Jobs {
    typealias Work = @Sendable () async -> JobResult

    private(set) var queued: [Work] = []
    /// Started and not yet back: the service stops only once this is zero.
    private(set) var inFlight = 0

    /// Queues `work`: the run loop starts it once the current event is handled.
    func add(_ work: @escaping Work) {
        queued.append(work)
        inFlight += 1
    }

    /// The jobs decided since the last call, for the run loop to start.
    func take() -> [Work] {
        defer { queued.removeAll() }
        return queued
    }

    /// A job's result has come back.
    func finished() { inFlight -= 1 }
}
