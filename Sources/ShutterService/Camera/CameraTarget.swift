// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// Which camera runs with what: the one of the board's cameras (`index`; nil:
/// the configuration's `camera.index` / `camera.model`), what it is opened with
/// (sizes, sensor HDR) and the sensor controls it has.
///
/// One owner: the control plane keeps the target (`CameraInUse.target`) and
/// decides the next one (`ControlOperations`); every supervisor command (the
/// first start, a watchdog restart, a reopen) carries it, and the supervisor
/// reports the one that started (a reopen that failed reports the one it went
/// back to). The supervisor keeps only the device it must stop.
struct CameraTarget: Equatable, Sendable {
    var index: Int?
    var opening: CameraOpening
    var controls: CameraControls

    init(index: Int? = nil, opening: CameraOpening, controls: CameraControls) {
        self.index = index
        self.opening = opening
        self.controls = controls
    }

    /// The configuration's camera, opening and controls.
    init(_ config: ShutterConfig) {
        self.init(opening: CameraOpening(config), controls: config.camera.controls)
    }
}
