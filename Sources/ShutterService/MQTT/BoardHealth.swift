// SPDX-License-Identifier: BSD-2-Clause
import ShutterCore

/// The board's own health, read where the kernel shows it: the CPU temperature
/// (`/sys/class/thermal/thermal_zone0/temp`, millidegrees) and, on a Raspberry Pi, the
/// firmware's throttled flags (`/sys/devices/platform/soc*/soc*:firmware/get_throttled`, the
/// value `vcgencmd get_throttled` prints, in hex). Where a file is absent there is no figure,
/// and no entity for it. `SHUTTER_SYSFS_ROOT` puts another directory in place of `/sys` (tests).
struct BoardHealth: Sendable {
    let temperaturePath: String?
    let throttledPath: String?

    init(sysfs: String = BoardHealth.sysfsRoot) {
        let temp = sysfs + "/class/thermal/thermal_zone0/temp"
        temperaturePath = PlainIO.fileExists(temp) ? temp : nil
        throttledPath = Self.firmwareFile(sysfs: sysfs, "get_throttled")
    }

    static var sysfsRoot: String {
        if let root = PlainIO.environment["SHUTTER_SYSFS_ROOT"], !root.isEmpty { return root }
        return "/sys"
    }

    /// The firmware node's file: `soc/soc:firmware` on the Pi 4 and older, `soc@…/soc@…:firmware` elsewhere.
    private static func firmwareFile(sysfs: String, _ name: String) -> String? {
        let platform = sysfs + "/devices/platform"
        for soc in (PlainIO.directoryEntries(platform) ?? []).sorted() where soc.hasPrefix("soc") {
            for node in (PlainIO.directoryEntries(platform + "/" + soc) ?? []).sorted() where node.hasSuffix(":firmware") {
                let file = platform + "/" + soc + "/" + node + "/" + name
                if PlainIO.fileExists(file) { return file }
            }
        }
        return nil
    }

    /// °C to a tenth; nil when unreadable.
    func temperature() -> Double? {
        guard let path = temperaturePath, let milli = Self.number(path, radix: 10) else { return nil }
        return (Double(milli) / 100).rounded() / 10
    }

    /// The throttled flags as the status message's object; nil when unreadable.
    func throttled() -> JSONObject? {
        guard let path = throttledPath, let flags = Self.number(path, radix: 16) else { return nil }
        return Self.describe(flags)
    }

    /// The firmware's bits: 0 under-voltage, 1 ARM frequency capped, 2 throttled, 3 soft
    /// temperature limit (now); 16-19 the same since boot. A problem while any holds now.
    static func describe(_ flags: Int) -> JSONObject {
        func bit(_ n: Int) -> JSONValue { .bool(flags & (1 << n) != 0) }
        return ["problem": .bool(flags & 0xF != 0), "flags": .string("0x" + String(flags, radix: 16)),
                "underVoltage": bit(0), "frequencyCapped": bit(1), "throttled": bit(2), "softTemperatureLimit": bit(3),
                "underVoltageSinceBoot": bit(16), "frequencyCappedSinceBoot": bit(17), "throttledSinceBoot": bit(18),
                "softTemperatureLimitSinceBoot": bit(19)]
    }

    private static func number(_ path: String, radix: Int) -> Int? {
        guard let bytes = try? PlainIO.readFile(path) else { return nil }
        var text = String(decoding: bytes, as: UTF8.self).trimmedWhitespace
        if radix == 16, text.hasPrefix("0x") { text.removeFirst(2) }
        return Int(text, radix: radix)
    }
}
