// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import XCTest
@testable import ShutterHardware

/// Against the real libgpiod installed here (1.6.3 on bookworm, 2.2.1 on trixie).
/// This machine has no GPIO chip (and no gpio-sim), so every path must end in a
/// clear, typed error.
final class GPIOChipTests: XCTestCase {
    func testShimIsBuiltAgainstTheInstalledLibgpiod() {
        // The shim's branch is chosen from the headers at compile time; the version
        // string comes from the library at run time: they must agree.
        let version = GPIOChips.libraryVersion
        if version.hasPrefix("1.") {
            // Bookworm: libgpiod 1.6.x, the v1 branch of the shim.
            XCTAssertEqual(GPIOChips.apiMajor, 1)
            XCTAssertTrue(version.hasPrefix("1.6"), version)
        } else {
            // Trixie: libgpiod 2.x, the v2 branch.
            XCTAssertEqual(GPIOChips.apiMajor, 2)
            XCTAssertTrue(version.hasPrefix("2."), version)
        }
    }

    func testListMatchesDevGpiochips() throws {
        let devices = try FileManager.default.contentsOfDirectory(atPath: "/dev")
            .filter { $0.hasPrefix("gpiochip") }.map { "/dev/" + $0 }
        XCTAssertEqual(Set(GPIOChips.list().map(\.path)), Set(devices))
    }

    func testMissingChipLabelGivesChipNotFoundWithAdvice() throws {
        try skipIfChipsPresent()
        XCTAssertThrowsError(try GPIOChips.locate(GPIOLineSpec(offset: 17))) { error in
            guard let e = error as? GPIOError else { return XCTFail("untyped error \(error)") }
            XCTAssertEqual(e.code, .chipNotFound)
            XCTAssertTrue(e.message.contains("pinctrl-rp1"), e.message)
            XCTAssertTrue(e.message.contains("no /dev/gpiochip* devices"), e.message)
            XCTAssertTrue(e.message.contains("`gpio`"), e.message)
        }
    }

    func testMissingLineNameGivesChipNotFoundWhenNoChips() throws {
        try skipIfChipsPresent()
        XCTAssertThrowsError(try GPIOChips.locate(GPIOLineSpec(name: "GPIO17"))) { error in
            XCTAssertEqual((error as? GPIOError)?.code, .chipNotFound)
        }
    }

    func testButtonAndLEDOpenFailCleanly() throws {
        try skipIfChipsPresent()
        XCTAssertThrowsError(try GPIOButton(.init(line: GPIOLineSpec(offset: 17)))) { error in
            XCTAssertEqual((error as? GPIOError)?.code, .chipNotFound)
        }
        XCTAssertThrowsError(try GPIOLED(name: "status", line: GPIOLineSpec(offset: 27, chipLabels: ["my-chip"]))) {
            error in
            let e = error as? GPIOError
            XCTAssertEqual(e?.code, .chipNotFound)
            XCTAssertTrue(e?.message.contains("my-chip") ?? false)
        }
    }

    func testErrorTextForChipsThatExistButDoNotMatch() {
        // What a user sees on a Pi with the wrong label configured, or without the `gpio` group.
        let chips = [
            GPIOChipInfo(path: "/dev/gpiochip0", name: "gpiochip0", label: "pinctrl-bcm2711", lineCount: 58, openErrno: 0),
            GPIOChipInfo(path: "/dev/gpiochip1", name: "", label: "", lineCount: 0, openErrno: EACCES),
        ]
        let e = GPIOChips.locateError(GPIOLineSpec(offset: 17, chipLabels: ["pinctrl-rp1"]), rc: -ENODEV, chips: chips)
        XCTAssertEqual(e.code, .chipNotFound)
        XCTAssertTrue(e.message.contains("/dev/gpiochip0 [pinctrl-bcm2711] (58 lines)"), e.message)
        XCTAssertTrue(e.message.contains("/dev/gpiochip1 (cannot open: Permission denied)"), e.message)
        let denied = GPIOChips.locateError(GPIOLineSpec(offset: 17), rc: -EACCES, chips: chips)
        XCTAssertEqual(denied.code, .permissionDenied)
        let busy = GPIOError.requestFailed(-EBUSY, what: "The button",
                                           line: GPIOLineLocation(chipPath: "/dev/gpiochip0", offset: 17))
        XCTAssertEqual(busy.code, .busy)
        XCTAssertTrue(busy.message.contains("gpioinfo"), busy.message)
    }

    private func skipIfChipsPresent() throws {
        if !GPIOChips.list().isEmpty { throw XCTSkip("this machine has GPIO chips; the gpio-sim tests cover it") }
    }
}
