// SPDX-License-Identifier: BSD-2-Clause
@testable import ShutterCore

extension CaptureStateMachine {
    /// For the tests where the flash mode and torch play no part: off, as the configuration's default.
    mutating func handle(_ input: CaptureInput, at now: MonotonicTime) -> [CaptureAction] {
        handle(input, at: now, lights: CaptureLights())
    }
}
