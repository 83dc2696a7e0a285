// SPDX-License-Identifier: BSD-2-Clause
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore

/// `--board auto`: which board profile fits this machine, from the device tree's
/// model string. nil means "not a Raspberry Pi we know": the service then runs
/// the simulated board.
public enum BoardDetection {
    public static let defaultModelPath = "/proc/device-tree/model"

    /// The board id (`rpi5`, `rpi4`, `rpi3`, `zero2w`) for this machine, or nil.
    /// `modelPath` is injectable for tests; an unreadable file gives nil.
    public static func detect(modelPath: String = defaultModelPath) -> String? {
        guard let data = FileManager.default.contents(atPath: modelPath) else { return nil }
        return boardID(forModel: String(decoding: data, as: UTF8.self))
    }

    /// Maps a model string ("Raspberry Pi 5 Model B Rev 1.0", NUL-terminated in the
    /// device tree) to a board id. The Pi 400 and 500 and the compute modules share
    /// their SoC, GPIO chip and camera stack with the Pi they are built from.
    public static func boardID(forModel raw: String) -> String? {
        let model = raw.trimmedWhitespaceAndNUL
        // Most specific first: "Raspberry Pi Zero 2 W" must not fall to a Pi 3 or the
        // original Zero (a different SoC, no profile).
        let table: [(prefix: String, id: String)] = [
            ("Raspberry Pi Zero 2 W", "zero2w"),
            ("Raspberry Pi 5", "rpi5"),           // also "Raspberry Pi 500"
            ("Raspberry Pi Compute Module 5", "rpi5"),
            ("Raspberry Pi 4", "rpi4"),           // also "Raspberry Pi 400"
            ("Raspberry Pi Compute Module 4", "rpi4"),
            ("Raspberry Pi 3", "rpi3"),
            ("Raspberry Pi Compute Module 3", "rpi3"),
        ]
        return table.first { model.hasPrefix($0.prefix) }?.id
    }
}
