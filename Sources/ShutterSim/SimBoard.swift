// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore
import Synchronization

/// Everything the simulated board has, in one place: the service takes its roles
/// from here, and the control socket's test commands reach the same objects.
/// Every device runs on `clock`: on a `ManualClock`, a test moves the whole
/// board (frames, stills' mode switches, autofocus, audio, button edge times)
/// with `advance(by:)`.
public final class SimBoard: Sendable {
    public let clock: any MonotonicClock
    /// Its cameras in libcamera's order (`sim.cameras`); one unless configured.
    /// A camera opened with other sizes or sensor HDR (`open`) is a new object here.
    public var cameras: [SimCamera] { list.withLock { $0 } }
    private let list: Mutex<[SimCamera]>
    /// The first camera: what a one-camera board's tests drive.
    public var camera: SimCamera { cameras[0] }
    public let button: SimButton
    public let microphone: SimMicrophone
    public let statusLED: SimLED
    public let flashLED: SimLED

    public convenience init(camera: SimCamera.Settings = SimCamera.Settings(), clock: any MonotonicClock = SystemClock()) {
        self.init(cameras: [camera], clock: clock)
    }

    /// `cameras` must not be empty.
    public init(cameras: [SimCamera.Settings], clock: any MonotonicClock = SystemClock()) {
        precondition(!cameras.isEmpty, "a simulated board has at least one camera")
        self.clock = clock
        let flash = SimLED(name: "flash")
        list = Mutex(cameras.map { SimCamera(settings: $0, clock: clock, flash: flash) })
        button = SimButton(clock: clock)
        microphone = SimMicrophone(clock: clock)
        statusLED = SimLED(name: "status")
        flashLED = flash
    }

    /// Opens camera `index` (a stopped one) with its settings changed by
    /// `change` (sizes, sensor HDR): the same camera when they are unchanged,
    /// else a new one in its place, as a sensor configured anew, that keeps its
    /// scene, fault and controls.
    public func open(_ index: Int, _ change: (inout SimCamera.Settings) -> Void) -> SimCamera {
        list.withLock { cameras in
            let old = cameras[index]
            var s = old.settings
            change(&s)
            guard s.videoSizes != old.settings.videoSizes || s.stillSizes != old.settings.stillSizes
                || s.sensorHDROn != old.settings.sensorHDROn else { return old }
            s.scene = old.scene
            s.controls = old.controlReport.asked
            let new = SimCamera(settings: s, clock: clock, flash: flashLED)
            new.fault = old.fault
            cameras[index] = new
            return new
        }
    }

    /// Returns once the board's own work (camera frames, a still's mode switch,
    /// autofocus, audio) is asleep on the clock. With `consumers`, also once every
    /// open frame and audio stream has a reader waiting for its next element (a
    /// stream no one reads keeps this waiting).
    public func settle(consumers: Bool = false) async {
        // Until one pass finds both quiet: a consumer catching up on one stream
        // may start work on the other device.
        while !(cameras.allSatisfy({ $0.isSettled(consumers: consumers) }) && microphone.isSettled(consumers: consumers)) {
            for c in cameras { await c.settle(consumers: consumers) }
            await microphone.settle(consumers: consumers)
        }
    }

    /// Test driver: moves the board's `ManualClock` forward by `duration` as real
    /// time would, stopping at every deadline on the way (each frame, audio
    /// chunk, mode-switch phase, and any other sleeper on the clock, such as the
    /// service's timers) and settling the board at each stop, then `andThen` (the
    /// test's own "the service has reacted"), before going on.
    public func advance(by duration: Duration, consumers: Bool = false,
                        andThen: @escaping @Sendable () async -> Void = {}) async {
        guard let manual = clock as? ManualClock else {
            preconditionFailure("SimBoard.advance(by:) needs a board made on a ManualClock")
        }
        await manual.advance(by: duration) {
            await self.settle(consumers: consumers)
            await andThen()
        }
    }
}
