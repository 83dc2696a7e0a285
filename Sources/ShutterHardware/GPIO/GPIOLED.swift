// SPDX-License-Identifier: BSD-2-Clause
import CGPIODShim
import ShutterCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An LED (status, flash) on a GPIO output line, active-low configurable.
/// A failed write is logged once and otherwise ignored: an LED must never stop
/// the camera (the ustreamer model). `writeFailures` counts them.
public final class GPIOLED: LEDOutput {
    private struct State: ~Copyable {
        var output: OpaquePointer?
        var failures = 0
        var lastOn = false
    }

    public let name: String
    public let activeLow: Bool
    public let location: GPIOLineLocation
    private let state: Mutex<State>
    private let log: @Sendable (String) -> Void

    /// Requests the line as an output, LED off. Throws when the line is missing or busy
    /// (the service may then carry on without this LED).
    public init(name: String, line: GPIOLineSpec, activeLow: Bool = false,
                log: @escaping @Sendable (String) -> Void = GPIOButton.logToStderr) throws {
        self.name = name
        self.activeLow = activeLow
        self.log = log
        let location = try GPIOChips.locate(line)
        self.location = location
        var handle: OpaquePointer?
        let rc = shutter_gpio_output_open(location.chipPath, location.offset, "shutter-led-\(name)",
                                          activeLow ? 1 : 0, &handle)
        guard rc == 0, let handle else {
            throw GPIOError.requestFailed(rc, what: "The \(name) LED", line: location)
        }
        state = Mutex(State(output: handle, lastOn: false))
    }

    deinit { close() }

    /// Never throws: a failure is logged the first time and counted.
    public func set(_ on: Bool) {
        let level: Int32 = on != activeLow ? 1 : 0
        let (rc, firstFailure): (Int32, Bool) = state.withLock { s in
            guard let output = s.output else { return (-EBADF, false) }
            let rc = shutter_gpio_output_set(output, level)
            if rc < 0 {
                s.failures += 1
                return (rc, s.failures == 1)
            }
            s.lastOn = on
            return (0, false)
        }
        if rc < 0 && firstFailure {
            log("<4>shutter.gpio: the \(name) LED (\(location.chipPath) line \(location.offset)) cannot be set: "
                + "\(String(cString: strerror(-rc))). Carrying on without it; further failures are not logged.")
        }
    }

    /// The level last written successfully (the line is requested off; after
    /// `close`, off if turning it off worked).
    public var isOn: Bool { state.withLock { $0.lastOn } }
    public var writeFailures: Int { state.withLock { $0.failures } }

    /// Turns the LED off and releases the line. Safe to call twice.
    public func close() {
        let taken: TakenGPIOHandle? = state.withLock { s in
            let o = s.output.map(TakenGPIOHandle.init)
            s.output = nil
            return o
        }
        guard let output = taken?.pointer else { return }
        if shutter_gpio_output_set(output, activeLow ? 1 : 0) == 0 {
            state.withLock { $0.lastOn = false }
        }
        shutter_gpio_output_close(output)
    }
}
