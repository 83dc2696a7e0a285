// SPDX-License-Identifier: BSD-2-Clause
import Foundation
import ShutterCore
import XCTest
@testable import ShutterHardware

/// The button and LEDs on a real kernel GPIO chip: gpio-sim, configured through
/// configfs (root). Runs in the emulated-hardware VM; skipped where the gpio-sim
/// module is absent (this build machine).
final class GPIOSimTests: XCTestCase {
    static let label = "shutter-test-chip"
    static let buttonOffset: UInt32 = 3
    static let ledOffset: UInt32 = 5
    private var sim: SimChip?

    override func setUpWithError() throws {
        guard FileManager.default.fileExists(atPath: "/sys/kernel/config/gpio-sim") else {
            throw XCTSkip("gpio-sim is not available (needs CONFIG_GPIO_SIM and configfs mounted)")
        }
        sim = try SimChip(label: Self.label, lines: 8, names: [Self.buttonOffset: "SHUTTER_TEST_BTN"])
    }

    override func tearDown() {
        sim?.remove()
        sim = nil
    }

    func testButtonEdgesCarryPressStateAndMonotonicKernelTimestamps() async throws {
        let sim = try XCTUnwrap(sim)
        let button = try GPIOButton(.init(line: GPIOLineSpec(offset: Self.buttonOffset, chipLabels: [Self.label])))
        defer { button.close() }
        XCTAssertFalse(try button.isPressed(), "pull-up bias: idle line is high = released")
        let edges = button.events()
        let before = SystemClock().now()
        try sim.setPull(Self.buttonOffset, up: false) // press: line to ground
        try await Task.sleep(nanoseconds: 20_000_000)
        try sim.setPull(Self.buttonOffset, up: true)  // release
        // If the edges never come, closing the button ends the stream and the test fails
        // (the 60 s only limit a hang).
        let watchdog = Task { try await Task.sleep(nanoseconds: 60_000_000_000); button.close() }
        defer { watchdog.cancel() }
        var it = edges.makeAsyncIterator()
        func edge(_ e: ButtonEvent?) -> ButtonEdge? { if case .edge(let x)? = e { x } else { nil } }
        let first = edge(await it.next())
        let second = edge(await it.next())
        let press = try XCTUnwrap(first, "no press edge within 60 s")
        let release = try XCTUnwrap(second, "no release edge within 60 s")
        // Caught up: behind both edges, dated no earlier than the release.
        button.catchUp()
        guard case .caughtUp(let t)? = await it.next() else { return XCTFail("no .caughtUp after catchUp()") }
        XCTAssertGreaterThanOrEqual(t, release.time)
        XCTAssertTrue(press.pressed)
        XCTAssertFalse(release.pressed)
        XCTAssertGreaterThanOrEqual(press.time, before)
        XCTAssertGreaterThan(release.time, press.time)
        XCTAssertLessThanOrEqual(release.time, SystemClock().now())
        XCTAssertGreaterThanOrEqual((release.time - press.time).milliseconds, 15)
    }

    func testLEDActiveLowDrivesTheLine() throws {
        let sim = try XCTUnwrap(sim)
        let led = try GPIOLED(name: "status", line: GPIOLineSpec(offset: Self.ledOffset, chipLabels: [Self.label]),
                              activeLow: true)
        XCTAssertEqual(try sim.value(Self.ledOffset), 1, "active-low LED starts off = high")
        led.set(true)
        XCTAssertEqual(try sim.value(Self.ledOffset), 0)
        led.set(false)
        XCTAssertEqual(try sim.value(Self.ledOffset), 1)
        XCTAssertEqual(led.writeFailures, 0)
        led.close()
        XCTAssertEqual(try sim.value(Self.ledOffset), 1, "closing turns the LED off")
    }

    /// `status` reads the LED through the role: the level last written, as the line shows it.
    func testLEDReportsTheLevelLastWrittenThroughTheRole() throws {
        let sim = try XCTUnwrap(sim)
        let gpio = try GPIOLED(name: "flash", line: GPIOLineSpec(offset: Self.ledOffset, chipLabels: [Self.label]))
        let led: any LEDOutput = gpio
        XCTAssertFalse(led.isOn, "requested off")
        try led.set(true)
        XCTAssertTrue(led.isOn)
        XCTAssertEqual(try sim.value(Self.ledOffset), 1)
        try led.set(false)
        XCTAssertFalse(led.isOn)
        try led.set(true)
        gpio.close()
        XCTAssertFalse(led.isOn, "closing turns it off")
        XCTAssertEqual(try sim.value(Self.ledOffset), 0)
        gpio.set(true)
        XCTAssertFalse(led.isOn, "a write after close does nothing")
    }

    func testSecondRequestIsBusyAndNamesAreFound() throws {
        let location = try GPIOChips.locate(GPIOLineSpec(name: "SHUTTER_TEST_BTN"))
        XCTAssertEqual(location.offset, Self.buttonOffset)
        XCTAssertTrue(GPIOChips.list().contains { $0.label == Self.label && $0.lineCount == 8 })
        let first = try GPIOButton(.init(line: GPIOLineSpec(name: "SHUTTER_TEST_BTN")))
        defer { first.close() }
        XCTAssertThrowsError(try GPIOButton(.init(line: GPIOLineSpec(name: "SHUTTER_TEST_BTN")))) {
            XCTAssertEqual(($0 as? GPIOError)?.code, .busy)
        }
    }
}

/// A gpio-sim chip made through configfs, removed again in tearDown.
private struct SimChip {
    let root: String
    let bank: String
    let sysfs: String
    let names: [UInt32: String]

    init(label: String, lines: Int, names: [UInt32: String]) throws {
        root = "/sys/kernel/config/gpio-sim/shutter-\(getpid())"
        bank = root + "/bank0"
        self.names = names
        let fm = FileManager.default
        try fm.createDirectory(atPath: bank, withIntermediateDirectories: true)
        try Self.put("\(lines)", bank + "/num_lines")
        try Self.put(label, bank + "/label")
        for (offset, name) in names {
            try fm.createDirectory(atPath: bank + "/line\(offset)", withIntermediateDirectories: false)
            try Self.put(name, bank + "/line\(offset)/name")
        }
        try Self.put("1", root + "/live")
        let device = try String(contentsOfFile: root + "/dev_name", encoding: .utf8).trimmed
        let chip = try String(contentsOfFile: bank + "/chip_name", encoding: .utf8).trimmed
        sysfs = "/sys/devices/platform/\(device)/\(chip)"
    }

    func setPull(_ offset: UInt32, up: Bool) throws {
        try Self.put(up ? "pull-up" : "pull-down", sysfs + "/sim_gpio\(offset)/pull")
    }

    func value(_ offset: UInt32) throws -> Int {
        Int(try String(contentsOfFile: sysfs + "/sim_gpio\(offset)/value", encoding: .utf8).trimmed) ?? -1
    }

    func remove() {
        try? Self.put("0", root + "/live")
        for offset in names.keys { rmdir(bank + "/line\(offset)") }
        rmdir(bank)
        rmdir(root)
    }

    static func put(_ text: String, _ path: String) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }
}

private extension String {
    var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
