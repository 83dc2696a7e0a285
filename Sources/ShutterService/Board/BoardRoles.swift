// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import ShutterSim

/// The devices the service runs on, whichever board provides them. The camera
/// is opened through a closure so that a missing camera can be retried,
/// another one chosen (`shutterctl camera`), and one opened again with other
/// sizes or sensor HDR (`shutterctl set video.sizes ...`).
public struct BoardRoles: Sendable {
    public var name: String
    /// Opens a camera: nil = the configuration's choice (`camera.index` /
    /// `camera.model`), else the camera at that index of `listCameras`; with
    /// the sizes and sensor HDR of the `CameraOpening`.
    public var openCamera: @Sendable (Int?, CameraOpening) async throws -> any CameraDevice
    /// The cameras there are now, in libcamera's order.
    public var listCameras: @Sendable () async throws -> [CameraListing]
    public var button: (any ButtonInput)?
    public var microphone: (any Microphone)?
    public var statusLED: (any LEDOutput)?
    public var flashLED: (any LEDOutput)?
    /// The simulated board, when this is one: the control socket's `sim` commands
    /// and the terminal keys reach it.
    public var sim: SimBoard?
    /// Whether the camera applies rotation/flip itself (libcamera transform): then
    /// EXIF says "upright"; otherwise EXIF carries the configured orientation.
    public var cameraAppliesTransform: Bool
    /// The trigger inputs' lines (`triggers.inputs`), in the configuration's order.
    public var triggers: [TriggerLineRole] = []

    public init(name: String, openCamera: @escaping @Sendable (Int?, CameraOpening) async throws -> any CameraDevice,
                listCameras: @escaping @Sendable () async throws -> [CameraListing],
                button: (any ButtonInput)?, microphone: (any Microphone)?, statusLED: (any LEDOutput)?,
                flashLED: (any LEDOutput)?, sim: SimBoard? = nil, cameraAppliesTransform: Bool,
                triggers: [TriggerLineRole] = []) {
        self.triggers = triggers
        self.name = name
        self.openCamera = openCamera
        self.listCameras = listCameras
        self.button = button
        self.microphone = microphone
        self.statusLED = statusLED
        self.flashLED = flashLED
        self.sim = sim
        self.cameraAppliesTransform = cameraAppliesTransform
    }

    /// The simulated board, sized from the configuration: one camera per
    /// `sim.cameras` entry (one when null); `camera` may change each further
    /// (a test's lacking controls).
    public static func simulated(config: ShutterConfig, clock: any MonotonicClock = SystemClock(),
                                 camera: (inout SimCamera.Settings) -> Void = { _ in }) -> BoardRoles {
        let entries = config.sim.cameras ?? [.init(model: SimCamera.Settings().model)]
        let settings = entries.enumerated().map { (i, entry) -> SimCamera.Settings in
            var s = SimCamera.Settings()
            s.model = entry.model
            s.id = "sim:\(i)"
            s.videoSizes = config.videoSizes
            s.stillSizes = config.stillSizes
            s.maxSize = entry.maxSize.flatMap(PixelSize.init(parsing:))
            s.sensorHDR = entry.sensorHdr
            s.startDelayMs = Int64(entry.startDelayMs)
            if entry.broken {
                s.brokenReason = "no answer from the sensor; check its ribbon cable (simulated: sim.cameras "
                    + "marks it broken)"
            }
            s.fps = config.video.fps
            s.modeSwitchMs = Int64(config.sim.modeSwitchMs)
            s.stillStream = config.sim.stillStream.map { PixelSize(width: $0[0], height: $0[1]) }
            s.scene = SimScene(lux: config.sim.sceneLux, colourTemperature: Double(config.sim.sceneKelvin),
                               subjectDioptres: config.sim.subjectDioptres)
            s.controls = config.camera.controls
            camera(&s)
            return s
        }
        let board = SimBoard(cameras: settings, clock: clock)
        let listing = board.cameras.enumerated().map { CameraListing(index: $0, model: $1.info.model, id: $1.info.id) }
        let configured = config.camera.model.isEmpty
            ? config.camera.index : CameraListing.firstIndex(ofModel: config.camera.model, in: listing.map(\.model))
        return BoardRoles(
            name: "sim",
            openCamera: { index, opening in
                guard let i = index ?? configured, board.cameras.indices.contains(i) else {
                    let asked = index.map { "camera \($0)" } ?? (config.camera.model.isEmpty
                        ? "camera.index \(config.camera.index)" : "camera.model \"\(config.camera.model)\"")
                    throw CameraError(.noDevice, "no simulated \(asked); the cameras are "
                        + listing.map(\.summary).joined(separator: ", ") + " (sim.cameras)")
                }
                return board.open(i) { s in
                    s.videoSizes = opening.videoSizes
                    s.stillSizes = opening.stillSizes
                    s.sensorHDROn = opening.sensorHDR && s.sensorHDR
                }
            },
            listCameras: { listing },
            button: board.button, microphone: config.audio.enabled ? board.microphone : nil,
            statusLED: board.statusLED, flashLED: board.flashLED, sim: board, cameraAppliesTransform: false,
            triggers: config.triggers.inputs.map { TriggerLineRole(name: $0.name, input: SimButton(clock: clock)) })
    }
}

/// A trigger input's line: its edges as a button's (a GPIO line, or on the simulated board
/// a `SimButton` that `sim --trigger NAME` moves), or why there is none.
public struct TriggerLineRole: Sendable {
    public var name: String
    public var input: (any ButtonInput)?
    /// Why the line could not be requested (the trigger then does nothing; `status` says why).
    public var problem: String?

    public init(name: String, input: (any ButtonInput)?, problem: String? = nil) {
        self.name = name
        self.input = input
        self.problem = problem
    }
}
