import ShutterCore

/// Everything the simulated board has, in one place: the service takes its roles
/// from here, and the control socket's test commands reach the same objects.
public final class SimBoard: Sendable {
    public let camera: SimCamera
    public let button: SimButton
    public let microphone: SimMicrophone
    public let statusLED: SimLED
    public let flashLED: SimLED

    public init(camera: SimCamera.Settings = SimCamera.Settings(), clock: any MonotonicClock = SystemClock()) {
        self.camera = SimCamera(settings: camera, clock: clock)
        button = SimButton(clock: clock)
        microphone = SimMicrophone()
        statusLED = SimLED(name: "status")
        flashLED = SimLED(name: "flash")
    }
}
