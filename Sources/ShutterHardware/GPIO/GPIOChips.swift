// SPDX-License-Identifier: BSD-2-Clause
import CGPIODShim
#if canImport(Glibc)
import Glibc
#endif

/// One /dev/gpiochip* device as the library sees it.
public struct GPIOChipInfo: Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var name: String
    public var label: String
    public var lineCount: Int
    /// 0 when the chip could be opened, else errno (EACCES: not in the `gpio` group).
    public var openErrno: Int32

    public var description: String {
        if openErrno != 0 { return "\(path) (cannot open: \(String(cString: strerror(openErrno))))" }
        return "\(path) [\(label)] (\(lineCount) lines)"
    }
}

/// Where a line is wanted: by chip label and offset, or by line name (optionally
/// only on chips with one of the labels). Never a fixed /dev/gpiochipN: the Pi 5
/// numbers its chips differently from the Pi 4, and gpio-sim numbers them anew.
public struct GPIOLineSpec: Sendable, Equatable, CustomStringConvertible {
    /// The header's chip labels per board; the first present wins.
    public static let raspberryPiChipLabels = ["pinctrl-rp1", "pinctrl-bcm2711", "pinctrl-bcm2835"]

    public var chipLabels: [String]
    public var lineName: String?
    public var offset: UInt32

    /// A BCM pin number on the header's chip (`chipLabels` tried in order).
    public init(offset: UInt32, chipLabels: [String] = GPIOLineSpec.raspberryPiChipLabels) {
        self.chipLabels = chipLabels
        self.lineName = nil
        self.offset = offset
    }

    /// A line by its name (`GPIO17` on the Pi's chips), on any chip unless labels are given.
    public init(name: String, chipLabels: [String] = []) {
        self.chipLabels = chipLabels
        self.lineName = name
        self.offset = 0
    }

    public var description: String {
        let chips = chipLabels.isEmpty ? "any chip" : "chip " + chipLabels.joined(separator: " or ")
        if let lineName { return "line \"\(lineName)\" on \(chips)" }
        return "line \(offset) on \(chips)"
    }
}

/// A line found on a present chip.
public struct GPIOLineLocation: Sendable, Equatable {
    public var chipPath: String
    public var offset: UInt32
}

/// The GPIO chips of this machine and the libgpiod the shim was built with.
public enum GPIOChips {
    /// 1 (Debian bookworm, libgpiod 1.6) or 2 (trixie, libgpiod 2.x).
    public static var apiMajor: Int { Int(shutter_gpio_api_major()) }
    public static var libraryVersion: String { String(cString: shutter_gpio_library_version()) }

    /// Every /dev/gpiochip*, sorted by number; chips that cannot be opened are listed with their errno.
    public static func list() -> [GPIOChipInfo] {
        var buffer = [shutter_gpio_chip](repeating: shutter_gpio_chip(), count: 64)
        let n = buffer.withUnsafeMutableBufferPointer { shutter_gpio_list_chips($0.baseAddress, Int32($0.count)) }
        guard n > 0 else { return [] }
        return buffer.prefix(min(Int(n), buffer.count)).map { c in
            GPIOChipInfo(path: cString(c.path), name: cString(c.name), label: cString(c.label),
                         lineCount: Int(c.num_lines), openErrno: c.open_errno)
        }
    }

    /// Finds the line `spec` names, or throws a GPIOError that lists what is there.
    public static func locate(_ spec: GPIOLineSpec) throws -> GPIOLineLocation {
        let labels: [String?] = spec.chipLabels.isEmpty ? [nil] : spec.chipLabels
        var lastRC: Int32 = -ENODEV
        for label in labels {
            var path = [CChar](repeating: 0, count: 64)
            var offset: UInt32 = 0
            let rc = path.withUnsafeMutableBufferPointer { p in
                shutter_gpio_find_line(label, spec.lineName, spec.offset, p.baseAddress, p.count, &offset)
            }
            if rc == 0 {
                let chipPath = path.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                return GPIOLineLocation(chipPath: chipPath, offset: offset)
            }
            lastRC = rc
            // A missing label means "try the next board's label"; anything else is the answer.
            if rc != -ENODEV { break }
        }
        throw locateError(spec, rc: lastRC, chips: list())
    }

    static func locateError(_ spec: GPIOLineSpec, rc: Int32, chips: [GPIOChipInfo]) -> GPIOError {
        let found = chips.isEmpty ? "no /dev/gpiochip* devices at all"
            : "found: " + chips.map(\.description).joined(separator: ", ")
        let check = "Check that /dev/gpiochip* exist and are readable by this user (add it to the `gpio` "
            + "group), that this is the right board, or set the chip label / line name in the board config."
        if chips.isEmpty {
            return GPIOError(.chipNotFound, "No GPIO chip for the \(spec) (\(found)). " + check,
                             errno: ENODEV)
        }
        switch -rc {
        case EACCES, EPERM:
            return GPIOError(.permissionDenied,
                             "Cannot look for the \(spec): permission denied (\(found)). " + check,
                             errno: -rc)
        case ENODEV:
            return GPIOError(.chipNotFound, "No GPIO chip for the \(spec) (\(found)). " + check,
                             errno: -rc)
        default:
            return GPIOError(.lineNotFound, "No \(spec) (\(found)). " + check, errno: -rc)
        }
    }
}

/// A fixed-size C char array (imported as a tuple) as a String.
func cString<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { raw in
        let bytes = raw.prefix { $0 != 0 }
        return String(decoding: bytes, as: UTF8.self)
    }
}
