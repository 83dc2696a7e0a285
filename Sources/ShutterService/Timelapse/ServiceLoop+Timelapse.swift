// SPDX-License-Identifier: BSD-2-Clause
import ShutterControl
import ShutterCore

/// `shutterctl timelapse`'s way in to the loop: a film to make, its status, its cancel.
extension ServiceLoop {
    func timelapse(_ ask: ServiceCommand.TimelapseAsk, _ reply: Reply) {
        switch ask {
        case .make(let order):
            timelapse.make(order, camera: control.inUse.camera?.info, reply: reply)
        case .status:
            var r = ControlReply(ok: true)
            r.timelapse = timelapse.report
            if r.timelapse == nil { r.note = "no time-lapse is being made" }
            reply.send(r)
        case .cancel:
            guard timelapse.cancel("`shutterctl timelapse cancel`") else {
                return reply.send(.failure("no time-lapse is being made"))
            }
            var r = ControlReply(ok: true)
            r.timelapse = timelapse.report
            r.note = "the film stops before its next photo; nothing is kept under its name"
            reply.send(r)
        }
    }
}
