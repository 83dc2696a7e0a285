// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterSim

/// The simulated board's own requests (`sim`: a camera fault, the scene's light, failing
/// LEDs) and the terminal's space bar: with BoardRoles, the one place the service meets
/// the simulated board. The loop only asks the roles.
extension BoardRoles {
    /// Applies a `sim` request; nil when this is no simulated board, else an error message
    /// or "" when done. `current`: the camera in use (a fault goes to it).
    func simCommand(_ r: ServiceCommand.SimRequest, current: (any CameraDevice)?, log: Log) -> String? {
        guard let sim else { return nil }
        if let fault = r.fault {
            (current as? SimCamera ?? sim.camera).fault = fault
            log.notice("sim: camera fault \(fault.rawValue)")
        }
        if let lux = r.lux { for c in sim.cameras { c.lux = lux } }
        if let failing = r.ledFailing {
            sim.statusLED.failing = failing
            sim.flashLED.failing = failing
        }
        if let (name, active) = r.trigger {
            guard let line = simTrigger(name) else {
                let known = triggers.map(\.name)
                return "no trigger input \"\(name)\"" + (known.isEmpty ? " (triggers.inputs is empty)"
                    : " (triggers.inputs has " + known.map { "\"\($0)\"" }.joined(separator: ", ") + ")")
            }
            line.set(pressed: active)
            log.notice("sim: trigger \(name) \(active ? "active" : "inactive")")
        }
        return ""
    }

    /// A trigger input's simulated line (the sim board's), by name.
    func simTrigger(_ name: String) -> SimButton? {
        triggers.first { $0.name == name }?.input as? SimButton
    }

    /// The terminal's space bar on the simulated board moves its button (which then reports
    /// the edge like any button); false on a board with no line to drive.
    func pressSimButton(_ pressed: Bool) -> Bool {
        guard let sim else { return false }
        sim.button.set(pressed: pressed)
        return true
    }
}
