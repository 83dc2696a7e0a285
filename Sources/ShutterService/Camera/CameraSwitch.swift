// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// `shutterctl camera [next|INDEX|MODEL]`: lists the cameras (a job), then
/// switches to the one asked for through a reopen (`CameraReopen`).
extension CameraControlPlane {
    /// `camera`: list the cameras, or switch to one.
    func cameraRequest(_ argument: String?, reply: Reply) {
        let id = ops.begin(.camera(argument: argument), reply: reply)
        ops[id]?.step = .listing
        listCameras(for: id)
    }

    func listCameras(for op: Int?) {
        let list = ctx.roles.listCameras
        jobs.add {
            do {
                return .camerasListed(op: op, .success(try await list()))
            } catch {
                return .camerasListed(op: op, .failure(error))
            }
        }
    }

    /// The cameras were listed: for `status`, and for the request that asked.
    func listed(op id: Int?, _ result: Result<[CameraListing], any Error>, cameraHealthy: Bool) {
        if case .success(let list) = result { cameras = list }
        guard let id, let op = ops[id] else { return }
        if case .listingForReply = op.step {
            var reply = op.failed.map(ControlReply.failure) ?? ControlReply(ok: true)
            if op.failed == nil { reply.note = op.notes.joined(separator: "; ") }
            reply.camera = inUseIndex.map { cameras[$0] }
            return finish(id, reply)
        }
        guard case .camera(let argument) = op.kind else { return }
        let list: [CameraListing]
        switch result {
        case .success(let l): list = l
        case .failure(let e): return finish(id, .failure("cannot list the cameras: \(e)"))
        }
        let inUse = inUseIndex
        guard let argument else {
            var reply = ControlReply(ok: true)
            reply.cameras = list.map { c in
                var c = c
                c.inUse = c.index == inUse
                return c
            }
            return finish(id, reply)
        }
        guard let choice = CameraChoice(parsing: argument) else {
            return finish(id, .failure("camera needs next, an index (0, 1, ...) or a model name, not \"\(argument)\"; "
                                       + "`shutterctl camera` lists them"))
        }
        let index: Int
        switch choice.pick(from: list, inUse: inUse) {
        case .success(let i): index = i
        case .failure(let e): return finish(id, .failure("\(e.message); `shutterctl camera` lists them"))
        }
        let target = list[index]
        if index == inUse, cameraHealthy {
            var reply = ControlReply(ok: true)
            reply.camera = target
            reply.note = "camera \(target.summary) is already in use"
            return finish(id, reply)
        }
        if ops.reopenAsked {
            var reply = ControlReply.failure("busy: a camera switch is in progress")
            reply.busy = true
            return finish(id, reply)
        }
        op.target = target
        op.from = inUse.map { list[$0].summary } ?? "none"
        op.reopen = ControlOp.Reopen(index: index, opening: opening, what: "camera switch to \(target.summary)")
        op.step = .waitingForCaptures
    }

    /// The camera in use among the listed cameras (by libcamera's id).
    var inUseIndex: Int? {
        guard let id = camera?.info.id else { return nil }
        return cameras.firstIndex { $0.id == id }
    }

    /// Before the loop: the camera a switch chose and the state file remembers
    /// (`CameraPick`, found among the listed cameras by the caller), or nil for
    /// the configuration's. Returns what the supervisor starts first.
    func firstTarget(index: Int?) -> CameraTarget {
        target.index = index
        return target
    }
}
