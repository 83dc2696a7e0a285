// SPDX-License-Identifier: BSD-2-Clause
import XCTest
import ShutterCore
@testable import ShutterHardware

/// GPIO and ALSA errors are `CodedError`s too: described as before, their errno kept.
final class HardwareErrorTests: XCTestCase {
    func testGPIOAndALSAErrorsDescribeThemselvesAsBefore() {
        XCTAssertEqual(GPIOError(.busy, "stop gpioset", errno: 16).description, "GPIO busy: stop gpioset")
        XCTAssertEqual(ALSAError(.deviceGone, "plug it back in").description, "ALSA deviceGone: plug it back in")
        XCTAssertEqual(PCMCapture.gone(rc: -19, device: "hw:1", during: "capturing").errno, 19, "ENODEV, positive")
    }
}
