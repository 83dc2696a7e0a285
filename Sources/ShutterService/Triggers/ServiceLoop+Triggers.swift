// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// The trigger inputs' way in to the loop: what an activation wants becomes the command a
/// request sends (`CaptureCommand.photo`, `.recordStart`, `.recordStop`, each with a request
/// id of its own, nobody waiting for the answer), given to the same capture machine as the
/// button's, after every event (a capture that ended frees the machine) and every tick.
extension ServiceLoop {
    func triggersAsk() {
        guard !triggers.isEmpty else { return }
        let now = ctx.now
        // Each command changes what the machine is doing: asked again until none is due.
        for _ in 0..<32 {
            let ready = stopping == nil && health.isReady && cameraWell
            guard let (line, command) = triggers.next(free: betweenCaptures, recording: isRecordingNow, ready: ready,
                                                      booting: !health.isReady, buttonHeld: button.heldPress != nil,
                                                      now: now) else { return }
            let id = requests.newRequest(at: now)
            triggers.asked(line, command, as: id)
            give(.command(command, id))
        }
    }

    /// A clip records (not finalising): a photo asked for now is a still from the video.
    var isRecordingNow: Bool {
        if case .recording = machine.state { return true }
        return false
    }
}
