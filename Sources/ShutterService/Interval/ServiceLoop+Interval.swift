// SPDX-License-Identifier: BSD-2-Clause
import ShutterControl
import ShutterCore

/// Interval capture's way in to the loop: a slot due becomes the photo a tap asks for
/// (`CaptureCommand.photo`, with a request id of its own, nobody waiting for the answer),
/// and `shutterctl interval` goes to `IntervalCapture`.
extension ServiceLoop {
    /// At every tick: the slot due, if any, asked for as a tap's photo.
    func intervalTick() {
        let now = ctx.now
        let ready = stopping == nil && health.isReady && cameraWell
        guard interval.tick(now: now, ready: ready, canCapture: canCapture) else { return }
        let id = requests.newRequest(at: now)
        interval.asked(id)
        give(.command(.photo, id))
    }

    /// No clip records and no photo (or press) is in progress: a slot's photo now would be
    /// taken at once, not refused or queued behind another capture.
    var canCapture: Bool { betweenCaptures }

    /// `shutterctl interval status|pause|resume|reset`: interval capture as it stands after the command.
    func interval(_ action: ServiceCommand.IntervalAction) -> ControlReply {
        guard interval.enabled else {
            return .failure("interval capture is off (interval.enabled is false); docs/interval.md says how to turn it on")
        }
        var r = ControlReply(ok: true)
        switch action {
        case .status: break
        case .pause: interval.pause()
        case .resume: interval.resume()
        case .reset: interval.reset()
        }
        r.interval = interval.report(now: ctx.now)
        return r
    }
}
