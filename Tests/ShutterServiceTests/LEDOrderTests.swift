// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterControl
import XCTest

/// A saved photo asks for `.ready` then `.photoTaken` in one event; the status LED must
/// show them in that order: the "photo taken" blink (dark-light-dark against the steady
/// ready light) after every photo. On the manual clock, reading the simulated LED.
final class LEDOrderTests: XCTestCase {
    func testTheBlinkFollowsEveryOneOfTwoHundredPhotos() async throws {
        let r = try await InProcessRig.start(self)
        let led = r.board.statusLED
        var missed: [Int] = []
        for i in 0..<200 {
            _ = try await r.photo()
            // The blink starts dark for 100 ms; the ready light is steady on.
            await r.advance(by: .milliseconds(50))
            let dark = !led.isOn
            await r.advance(by: .milliseconds(350))
            if !dark || !led.isOn { missed.append(i) }
        }
        print("LED order: the blink followed \(200 - missed.count) of 200 photos; missed: \(missed)")
        XCTAssertEqual(missed, [], "photos whose blink was lost")
        let status = await r.status()
        XCTAssertEqual(status.counters.photos, 200)
        XCTAssertEqual(status.leds["status"]?.pattern, "photoTaken")
    }
}
