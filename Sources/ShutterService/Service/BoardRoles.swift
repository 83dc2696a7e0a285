import ShutterCore
import ShutterSim

/// The devices the service runs on, whichever board provides them. The camera
/// is opened through a closure so that a missing camera can be retried.
public struct BoardRoles: Sendable {
    public var name: String
    public var openCamera: @Sendable () async throws -> any CameraDevice
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

    public init(name: String, openCamera: @escaping @Sendable () async throws -> any CameraDevice,
                button: (any ButtonInput)?, microphone: (any Microphone)?, statusLED: (any LEDOutput)?,
                flashLED: (any LEDOutput)?, sim: SimBoard? = nil, cameraAppliesTransform: Bool) {
        self.name = name
        self.openCamera = openCamera
        self.button = button
        self.microphone = microphone
        self.statusLED = statusLED
        self.flashLED = flashLED
        self.sim = sim
        self.cameraAppliesTransform = cameraAppliesTransform
    }

    /// The simulated board, sized from the configuration; `camera` may change
    /// its camera further (a test's lacking controls).
    public static func simulated(config: ShutterConfig, clock: any MonotonicClock = SystemClock(),
                                 camera: (inout SimCamera.Settings) -> Void = { _ in }) -> BoardRoles {
        var s = SimCamera.Settings()
        s.width = config.video.width
        s.height = config.video.height
        s.fps = config.video.fps
        s.stillWidth = config.still.width
        s.stillHeight = config.still.height
        s.modeSwitchMs = Int64(config.sim.modeSwitchMs)
        s.stillStream = config.sim.stillStream.map { PixelSize(width: $0[0], height: $0[1]) }
        s.scene = SimScene(lux: config.sim.sceneLux, colourTemperature: Double(config.sim.sceneKelvin),
                           subjectDioptres: config.sim.subjectDioptres)
        s.controls = config.camera.controls
        camera(&s)
        let board = SimBoard(camera: s, clock: clock)
        return BoardRoles(name: "sim", openCamera: { board.camera }, button: board.button,
                          microphone: config.audio.enabled ? board.microphone : nil,
                          statusLED: board.statusLED, flashLED: board.flashLED, sim: board,
                          cameraAppliesTransform: false)
    }
}
